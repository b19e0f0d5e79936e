import pytest

from harness.errors import UserError
from harness.evals.thresholds import ThresholdsFile, load_thresholds, resolve_threshold


def test_shipped_default():
    t = load_thresholds()
    assert t.default["gsm8k"] == 0.90
    assert resolve_threshold(t, "musespark", "gsm8k").model_dump() == \
        {"task": "gsm8k", "min_score": 0.90, "source": "default"}


def test_resolution_order_model_then_default_then_min_score():
    t = ThresholdsFile(default={"gsm8k": 0.90}, models={"qwen3.5": {"gsm8k": 0.94}})
    assert resolve_threshold(t, "qwen3.5", "gsm8k", 0.5).min_score == 0.94
    assert resolve_threshold(t, "qwen3.5", "gsm8k").source == "models.qwen3.5"
    assert resolve_threshold(t, "dsr1", "gsm8k", 0.5).source == "default"
    assert resolve_threshold(t, "dsr1", "other", 0.5).model_dump() == \
        {"task": "other", "min_score": 0.5, "source": "--min-score"}
    with pytest.raises(UserError, match="no threshold for task 'other'"):
        resolve_threshold(t, "dsr1", "other")


def test_bad_files(tmp_path):
    bad = tmp_path / "t.yaml"
    bad.write_text("default: {gsm8k: 1.5}\n")
    with pytest.raises(UserError, match="default.gsm8k: expected a score in"):
        load_thresholds(bad)
    bad.write_text("defaults: {gsm8k: 0.9}\n")
    with pytest.raises(UserError, match="defaults"):
        load_thresholds(bad)
    with pytest.raises(UserError, match="no such thresholds file"):
        load_thresholds(tmp_path / "missing.yaml")

"""`harness predict`: a recipe's points answered by the simulator's model on a virtual clock (no server, no client)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.predict.summary import percentile
from harness.predict.virtual import Window, run_window
from harness.predict.workload import chained_hashes, lane_script, warmup_calls
from harness.traces.files import read_local

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "quickstart-sim.yaml"


def test_percentile_interpolates() -> None:
    assert percentile([], 50) is None
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 90) == pytest.approx(4.6)


def test_chained_hashes_share_exactly_the_common_prefix() -> None:
    a = chained_hashes("s", [1, 2, 3])
    b = chained_hashes("s", [1, 2, 4])
    assert a[:2] == b[:2] and a[2] != b[2]
    assert chained_hashes("other", [1])[0] != a[0]


def test_lane_scripts_are_seeded() -> None:
    corpus = read_local(ROOT / "recipes" / "traces" / "quickstart")
    one = lane_script(corpus, 0, 4, 42, warmup_calls(None))
    again = lane_script(corpus, 0, 4, 42, warmup_calls(None))
    assert [t.block_hashes for t in one.warmup] == [t.block_hashes for t in again.warmup]
    assert all(t.output_tokens == 1 and t.think_s == 0 for t in one.warmup)
    assert one.resume_s >= 0


def test_the_warmup_is_a_primer_plus_the_recipes_budget_or_the_presets() -> None:
    corpus = read_local(ROOT / "recipes" / "traces" / "quickstart")
    assert (warmup_calls(None), warmup_calls(3)) == (11, 4)
    assert len(lane_script(corpus, 0, 4, 42, warmup_calls(3)).warmup) == 4


def _predict_json(capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    assert cli_main(["predict", str(RECIPE), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_predict_quickstart_monotone_and_shaped(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _predict_json(capsys, "--duration", "30")
    assert doc["config_key"] == "quickstart-sim"
    points = doc["points"]
    assert [p["name"] for p in points] == ["c2", "c4", "c8"]
    keys = {"conc", "gpus", "samples", "window_s", "requests", "kv_peak_use", "kv_mean_use", "queue_peak", "queue_mean",
            "output_tok_s", "output_tok_s_per_gpu", "ttft_p50_s", "ttft_p90_s", "e2el_p50_s", "e2el_p90_s",
            "interactivity_p50_tok_s", "interactivity_p90_tok_s", "predicted"}
    for p in points:
        assert keys <= set(p)
        assert p["predicted"]["engine"] == "sim" and p["predicted"]["profile"] == "demo"
        assert p["predicted"]["calibrated"] is False and "predicted" in p["predicted"]["source"]
        assert 0 < p["kv_peak_request_use"] <= p["kv_peak_use"] <= 1 and p["requests"] > 0
        assert p["ttft_p50_s"] <= p["ttft_p90_s"] and p["e2el_p50_s"] <= p["e2el_p90_s"]
    tput = [p["output_tok_s"] for p in points]
    assert tput[0] < tput[1] < tput[2]


def test_predict_seed_reproduces_and_varies(capsys: pytest.CaptureFixture[str]) -> None:
    a = _predict_json(capsys, "--points", "c4", "--duration", "20", "--seed", "1")
    b = _predict_json(capsys, "--points", "c4", "--duration", "20", "--seed", "1")
    c = _predict_json(capsys, "--points", "c4", "--duration", "20", "--seed", "2")
    assert a == b
    assert a["points"][0]["e2el_p50_s"] != c["points"][0]["e2el_p50_s"]


def test_predict_table_says_predicted(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["predict", str(RECIPE), "--points", "c2", "--duration", "10"]) == 0
    out = capsys.readouterr().out
    assert "PREDICTED by the simulator" in out and "profile demo (not calibrated)" in out


def test_predict_pools_samples(capsys: pytest.CaptureFixture[str]) -> None:
    one = _predict_json(capsys, "--points", "c2", "--duration", "20")["points"][0]
    three = _predict_json(capsys, "--points", "c2", "--duration", "20", "--samples", "3")["points"][0]
    assert one["samples"] == 1 and three["samples"] == 3
    assert 60.0 <= three["window_s"] <= 60.0 + 3 * 10.0   # three 20 s windows, each run on into its 10 s grace
    assert three["requests"] > one["requests"]


def _windows(monkeypatch: pytest.MonkeyPatch, *settings: str) -> list[Window]:
    """The virtual windows of the quick start's c2 (60 s) under `settings`."""
    from harness.predict import point
    from harness.recipe.points import load_plans

    seen: list[Window] = []

    def keep(*args: object, **kwargs: object) -> Window:
        window = run_window(*args, **kwargs)  # type: ignore[arg-type]
        seen.append(window)
        return window

    monkeypatch.setattr(point, "run_window", keep)
    _, (plan,) = load_plans(RECIPE, ["c2"], list(settings), unofficial=True)
    point.predict_point(plan, "demo", 42, {})
    return seen


def test_burst_starts_send_every_lanes_first_call_at_the_window_start(monkeypatch: pytest.MonkeyPatch) -> None:
    (burst,) = _windows(monkeypatch, "client.burst_phase_starts=true")
    (spaced,) = _windows(monkeypatch)
    assert burst.start > 0 and burst.start == pytest.approx(spaced.start)   # the same warm-up before the window
    at_start = [f for f in burst.finished if f.sent == burst.start]
    assert len(at_start) == 2                                               # both lanes' first calls
    assert len([f for f in spaced.finished if f.sent == spaced.start]) == 1  # the earliest lane's only


def test_the_warmup_length_is_reported(capsys: pytest.CaptureFixture[str]) -> None:
    points = _predict_json(capsys, "--duration", "10")["points"]
    warm = [p["warmup_s"] for p in points]
    assert 0 < warm[0] < warm[-1]             # more lanes on the same pool: a longer warm-up

"""`harness diff`: per-point change lists between two recipe versions."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main as cli
from harness.errors import UserError
from harness.recipe.diff import diff_recipes, diff_specs, read_recipe_text
from harness.recipe.load import parse_recipe

ROOT = Path(__file__).resolve().parents[2]
GB300 = ROOT / "recipes" / "musespark-fp4-gb300-sglang-agentic-dflash.yaml"
PREVIOUS = ROOT / "tests" / "fixtures" / "recipes" / "musespark-gb300-previous.yaml"

BASE: dict[str, Any] = {
    "config_key": "t", "image": "img:1",
    "model": {"path": "org/m", "served_name": "m"},
    "hardware": {"gpu": "h200", "gpus_per_node": 8},
    "server": {"args": {"stream-interval": 10}},
    "client": {"traces": "traces/x"},
    "points": {"c1": {"args": {"max-running-requests": 1}}, "c8": {"args": {"max-running-requests": 8}}},
}


def both(change: Any) -> tuple[Any, Any]:
    old = parse_recipe(copy.deepcopy(BASE))
    raw = copy.deepcopy(BASE)
    change(raw)
    return old, parse_recipe(raw)


def test_gb300_change_reads_like_the_engineers_describe_it() -> None:
    out = diff_specs(str(PREVIOUS), str(GB300)).render().splitlines()
    assert out[1:] == [
        "- image: lmsysorg/sglang:nightly-dev-20260930-5e1f0b2c → lmsysorg/sglang:nightly-dev-20261021-c1c287a4",
        "- c10: max-running-requests 10 → 3, cuda-graph-max-bs-decode 10 → 3",
        "- c16: removed",
        "- c20: removed",
        "- c24: prefill-decode-interval 32 → 96",
        ("- c28 (new), starting from the c24 settings: hicache-size 120 → 160, "
         "hicache-write-policy write_through → write_back"),
        ("- c30 (new), starting from the c24 settings: hicache-size 120 → 160, "
         "hicache-write-policy write_through → write_back, prefill-decode-interval 32 → 64"),
        "- c34: hicache-size 150 → 160, hicache-write-policy write_through → write_back",
        "- c40: removed",
        "- c44 (new), starting from the c40 settings: hicache-write-policy write_through → write_back",
        "- c48 (new), starting from the c40 settings: hicache-write-policy write_through → write_back",
        "- unchanged: c1, c5, c8, c15",
    ]


def test_base_change_is_listed_once_not_per_point() -> None:
    old, new = both(lambda r: r["server"]["args"].update({"stream-interval": 20}))
    d = diff_recipes(old, new)
    assert [c.words() for c in d.base] == ["stream-interval 10 → 20"]
    assert [p.status for p in d.points] == ["unchanged", "unchanged"]


def test_point_that_keeps_its_own_value_against_a_base_change_is_not_hidden() -> None:
    def change(r: dict[str, Any]) -> None:
        r["server"]["args"]["stream-interval"] = 20
        r["points"]["c8"]["args"]["stream-interval"] = 10

    d = diff_recipes(*both(change))
    assert d.points[1].status == "unchanged"  # c8 still runs with 10
    assert d.render().splitlines()[1:] == ["- base: stream-interval 10 → 20", "- unchanged: c1, c8"]


def test_added_and_removed_flags_and_env() -> None:
    def change(r: dict[str, Any]) -> None:
        r["points"]["c1"]["args"] = {"max-running-requests": 1, "enable-metrics": True}
        r["points"]["c8"]["args"] = {}
        r["points"]["c8"]["env"] = {"X": "1"}

    text = diff_recipes(*both(change)).render()
    assert "- c1: enable-metrics unset → on" in text
    assert "- c8: env X unset → 1, max-running-requests 8 → unset" in text


def test_new_point_without_lineage_starts_from_the_closest_old_point() -> None:
    old, new = both(lambda r: r["points"].update({"c6": {"args": {"max-running-requests": 8, "stream-interval": 5}}}))
    (p,) = [p for p in diff_recipes(old, new).points if p.name == "c6"]
    assert p.starting_from == "c8"
    assert [c.words() for c in p.changes] == ["stream-interval 10 → 5"]


def test_closest_tie_goes_to_the_nearest_concurrency() -> None:
    old, new = both(lambda r: r["points"].update({"c3": {"args": {"max-running-requests": 3}}}))
    (p,) = [p for p in diff_recipes(old, new).points if p.name == "c3"]
    assert p.starting_from == "c1"


def test_recipe_level_changes() -> None:
    def change(r: dict[str, Any]) -> None:
        r["image"] = "img:2"
        r["client"]["duration_s"] = 120
        r["infmax_model_prefix"] = "qwen3.5"
        r["parallelism"] = {"tp": 8, "dp_attention": 8, "dcp": 2}

    lines = diff_recipes(*both(change)).render().splitlines()
    assert "- image: img:1 → img:2" in lines and "- client.duration_s: 60 → 120" in lines
    assert "- infmax_model_prefix: None → qwen3.5" in lines
    assert "- base: tp-size 1 → 8, attn-dp-size unset → 8, dcp-size unset → 2" in lines


def test_no_changes() -> None:
    d = diff_recipes(*both(lambda r: None))
    assert d.render().splitlines()[1:] == ["- unchanged: c1, c8"]


def test_rev_path_reads_from_git(tmp_path: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    git("init", "-q")
    f = tmp_path / "r.yaml"
    f.write_text(PREVIOUS.read_text())
    git("add", "r.yaml")
    git("commit", "-q", "-m", "old")
    f.write_text(GB300.read_text())
    text, source = read_recipe_text("HEAD:r.yaml", cwd=tmp_path)
    assert text == PREVIOUS.read_text() and source == "HEAD:r.yaml"
    with pytest.raises(UserError, match="HEAD:nope.yaml: cannot read it from git"):
        read_recipe_text("HEAD:nope.yaml", cwd=tmp_path)


def test_cli_diff(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["diff", str(PREVIOUS), str(GB300)]) == 0
    assert "- c28 (new), starting from the c24 settings:" in capsys.readouterr().out
    assert cli(["diff", str(PREVIOUS), "/nonexistent.yaml"]) == 2

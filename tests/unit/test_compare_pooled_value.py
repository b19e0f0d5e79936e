"""`compare` shows, for a side run more than once, the value its interval pools: the percentile over every run's
requests, not the newest run's own figure; a side run once shows its record's value."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from harness.artifacts import write_json
from harness.cli import main

FIX = Path(__file__).parent.parent / "fixtures" / "results" / "sim-run" / "quickstart-sim" / "conc4"
RECORD = {"state": "completed", "recipe_fingerprint": "f" * 64, "overrides": [], "image": "img", "engine": "sim",
          "conc": 4, "client": {"requested_duration_s": 20}}


def _slower(text: str, factor: float) -> str:
    return re.sub(r'"request_latency":\{"value":([0-9.]+)',
                  lambda m: f'"request_latency":{{"value":{float(m.group(1)) * factor}', text)


def _point(run: Path, earlier_factors: list[float]) -> Path:
    """The fixture's c4 as its newest run, with earlier identical runs whose requests took `factor` times as long."""
    pdir = run / "quickstart-sim" / "conc4"
    shutil.copytree(FIX, pdir)
    row = json.loads((pdir / "bmk_agentic_quickstart-sim_conc4.json").read_text())
    record = {**row, **RECORD, "config_key": "quickstart-sim", "row": "bmk_agentic_quickstart-sim_conc4.json"}
    write_json(pdir / "point_result.json", record)
    write_json(pdir / "status.json", {"state": "completed", "conc": 4})
    records = (FIX / "aiperf" / "profile_export.jsonl").read_text()
    for i, factor in enumerate(earlier_factors, start=1):
        (pdir / "attempts" / str(i) / "aiperf").mkdir(parents=True)
        (pdir / "attempts" / str(i) / "aiperf" / "profile_export.jsonl").write_text(_slower(records, factor))
        write_json(pdir / "attempts" / str(i) / "point_result.json", record)
    return pdir


def _e2el_s(text: str) -> list[float]:
    return [float(v) / 1000 for v in re.findall(r'"request_latency":\{"value":([0-9.]+)', text)]


def test_the_old_column_of_a_repeated_side_is_the_pooled_percentile(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _point(tmp_path / "a", [3.0, 3.0])
    _point(tmp_path / "b", [])
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json"]) == 0
    (point,) = json.loads(capsys.readouterr().out)["comparisons"][0]["points"]
    records = (FIX / "aiperf" / "profile_export.jsonl").read_text()
    newest = _e2el_s(records)
    pooled = newest + 2 * _e2el_s(_slower(records, 3.0))
    assert point["noise"]["e2el_p50"]["runs_a"] == 3
    assert point["e2el_p50"]["old"] == pytest.approx(float(np.percentile(pooled, 50)))
    assert point["e2el_p50"]["old"] != pytest.approx(float(np.percentile(newest, 50)))
    assert main(["compare", str(tmp_path / "b"), str(tmp_path / "b"), "--json"]) == 0
    (once,) = json.loads(capsys.readouterr().out)["comparisons"][0]["points"]
    assert point["e2el_p50"]["new"] == once["e2el_p50"]["old"]   # a side run once: its record's value

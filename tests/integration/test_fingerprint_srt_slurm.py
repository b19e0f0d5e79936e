"""srt-slurm's own `diff_fingerprints` on the harness's real fingerprints, as recorded by running it unmodified
(tests/fixtures/srt-slurm: `recorded.json`, commit and command in its README), and the harness's captures held
to the shape srt-slurm read there.

- two captures of one environment: srt-slurm matched every field and package; `harness fingerprint diff`
  says nothing differs;
- one venv, `sglang` 0.5.2 then 0.5.3 behind two image references: srt-slurm reported exactly the sglang
  change, the harness's diff the framework, package and image;
- a point's fingerprint from a real H200 against one of this machine: srt-slurm reported the Python, OS,
  NCCL and driver changes, the harness's diff too;
- a capture made now has srt-slurm's keys with the recorded types, so srt-slurm reads it as it read those.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.point.fingerprints.fingerprint_diff import fingerprint_diff
from tests.fingerprints import capture

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "srt-slurm"
RECORDED = json.loads((FIXTURE / "recorded.json").read_text())
SRT_KEYS = ("hostname", "timestamp", "arch", "os", "gpu", "python_version", "cuda_version", "nccl_version",
            "frameworks", "pip_packages", "model")


def test_one_environment_srt_slurm_matched_everything_and_so_does_our_diff() -> None:
    pair = RECORDED["same_environment"]
    srt = pair["srt_slurm"]
    assert srt["field_changes"] == {} and srt["package_diffs"] == [] and srt["packages_matched"] > 20
    assert fingerprint_diff(pair["a"], pair["b"]) == []


def test_sglang_upgrade_srt_slurm_reported_it_and_so_does_our_diff() -> None:
    pair = RECORDED["sglang_upgrade"]
    srt = pair["srt_slurm"]
    assert srt["package_diffs"] == [["sglang", "mismatch", "0.5.2", "0.5.3"]]
    assert "sglang: 0.5.2  ->  0.5.3" in srt["format_diff"]
    a, b = pair["a"], pair["b"]
    assert a["frameworks"]["sglang"] == "0.5.2" and b["frameworks"]["sglang"] == "0.5.3"
    ours = fingerprint_diff(a, b)
    assert 'frameworks.sglang: "0.5.2" -> "0.5.3"' in ours
    assert any(re.fullmatch(r'pip_packages\..*\.sglang: "0\.5\.2" -> "0\.5\.3"', line) for line in ours)
    assert 'image.reference: "lmsysorg/sglang:v0.5.2-cu126" -> "lmsysorg/sglang:v0.5.3-cu126"' in ours


def test_h200_against_this_machine_srt_slurm_and_our_diff_report_python_and_gpu() -> None:
    pair = RECORDED["h200_vs_here"]
    h200 = json.loads((FIXTURE / pair["a"]).read_text())
    srt = pair["srt_slurm"]
    assert {"python_version", "os", "gpu.driver"} <= set(srt["field_changes"])
    assert srt["field_changes"]["gpu.driver"][0] == h200["gpu"]["driver"] == "580.159.04"
    assert h200["gpu"]["available"] and h200["gpu"]["gpus"][0]["name"] == "NVIDIA H200"
    ours = fingerprint_diff(h200, pair["b"])
    assert f'python_version: "{h200["python_version"]}" -> "{pair["b"]["python_version"]}"' in ours
    assert any(line.startswith("gpu.") for line in ours)


def _shape(value: Any) -> Any:
    """Types of a fingerprint value two levels down (what srt-slurm's diff relies on)."""
    if isinstance(value, dict):
        return {"dict": sorted((k, type(v).__name__) for k, v in value.items())} if value else "dict"
    if isinstance(value, list):
        return ["list", sorted({type(v).__name__ for v in value})]
    return type(value).__name__


@pytest.mark.slow
def test_a_capture_made_now_reads_as_the_recorded_ones(tmp_path: Path) -> None:
    now = capture(tmp_path, "now", sys.executable, "img:1")
    recorded = RECORDED["same_environment"]["a"]
    for key in SRT_KEYS:
        assert key in now, key
        if key in ("pip_packages", "frameworks", "gpu"):
            continue
        assert _shape(now[key]) == _shape(recorded[key]), key
    assert _shape(now["gpu"]) == _shape(recorded["gpu"])   # no GPU here, as when recorded
    for source in (now["pip_packages"], recorded["pip_packages"]):
        lists = list(source.values())
        assert lists and all(isinstance(pkgs, list) and all(re.fullmatch(r"\S+==\S+|\S.*", p) for p in pkgs)
                             for pkgs in lists)
    pattern = re.compile(r"[A-Za-z0-9_.\-]+==\S+")
    assert sum(1 for p in next(iter(now["pip_packages"].values())) if pattern.fullmatch(p)) > 20

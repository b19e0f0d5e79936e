"""`harness power integrate` and `harness power sample` through the real CLI dispatcher."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.power import COLUMNS, PowerSample
from harness.power.samples import format_row

S = 1_000_000_000
T0 = 1_700_000_000 * S
UUID = "GPU-aaaaaaaa-0000"


def power_csv(tmp_path: Path, gpus: int = 1) -> Path:
    rows = [",".join(COLUMNS)]
    for index in range(gpus):
        for t in range(11):  # 200 W per GPU, counter at 200 J/s
            sample = PowerSample(T0 + t * S, index, f"{UUID}{index}", 200.0, 200_000 * t)
            rows.append(",".join(format_row(sample)))
    path = tmp_path / "power.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_integrate_prints_energy_and_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = power_csv(tmp_path, gpus=2)
    rc = main(
        [
            "power",
            "integrate",
            str(path),
            "--start-ns",
            str(T0 + S // 2),
            "--end-ns",
            str(T0 + 5 * S // 2),
            "--expected-gpus",
            "2",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0
    assert out.splitlines()[0] == "power_valid: true  window: 2.000 s"
    assert "energy 400.000 J (energy_counter), avg 200.000 W; counter 400.000 J, trapezoid 400.000 J" in out
    assert out.splitlines()[-1] == "total_gpu_energy_j: 800.0"


def test_integrate_json_and_validation_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = power_csv(tmp_path)
    out_file = tmp_path / "audit" / "power_validation.json"
    rc = main(
        [
            "power",
            "integrate",
            str(path),
            "--start-ns",
            str(T0 + S),
            "--end-ns",
            str(T0 + 4 * S),
            "--expected-gpus",
            "2",
            "--reference-duration-s",
            "3.0",
            "--validation-out",
            str(out_file),
            "--json",
        ]
    )
    body = json.loads(capsys.readouterr().out)
    assert rc == 1
    assert body["reason_codes"] == ["gpu_count_mismatch"]
    assert body["gpus"][0]["energy_j"] == 600.0
    saved = json.loads(out_file.read_text())
    assert saved["schema_version"] == 1 and saved["reason_codes"] == ["gpu_count_mismatch"]


def test_integrate_rejects_an_empty_window(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = power_csv(tmp_path)
    assert main(["power", "integrate", str(path), "--start-ns", "5", "--end-ns", "5"]) == 2
    assert capsys.readouterr().err.strip() == "error: --end-ns: expected a time after --start-ns 5, got 5"


def test_integrate_reports_a_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["power", "integrate", str(tmp_path / "nope.csv"), "--start-ns", "1", "--end-ns", "2"])
    out = capsys.readouterr().out
    assert rc == 1 and "reason telemetry_file_missing:" in out


def test_sample_without_nvml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    out = tmp_path / "power.csv"
    assert main(["power", "sample", "--seconds", "30", "--out", str(out)]) == 1  # returns at once
    assert "nvml_unavailable" in capsys.readouterr().err
    assert out.read_text().splitlines() == [",".join(COLUMNS)]
    assert main(["power", "sample", "--seconds", "0", "--out", str(out)]) == 2

"""Integration of synthetic power samples: hand-computed energies and every reason code."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.artifacts import read_json, write_json
from harness.power import PowerReport, PowerSample, integrate_power, integrate_samples
from harness.power.reasons import DESCRIPTIONS
from harness.power.samples import COLUMNS, format_row, parse_row, read_power_csv, status_path

S = 1_000_000_000
T0 = 1_700_000_000 * S  # an arbitrary wall-clock origin (UTC ns)
UUID_A = "GPU-aaaaaaaa-0000-0000-0000-000000000000"
UUID_B = "GPU-bbbbbbbb-0000-0000-0000-000000000000"


def series(
    points: list[tuple[float, float]],
    *,
    uuid: str = UUID_A,
    index: int = 0,
    energy: list[float] | None = None,
) -> list[PowerSample]:
    """Samples at (seconds after T0, watts); `energy` gives the counter in joules (None: no counter)."""
    return [
        PowerSample(
            timestamp_ns=T0 + round(t * S),
            gpu_index=index,
            gpu_uuid=uuid,
            power_w=p,
            energy_mj=None if energy is None else round(energy[i] * 1000),
        )
        for i, (t, p) in enumerate(points)
    ]


def constant(watts: float, seconds: int, **kw: object) -> list[PowerSample]:
    pts = [(float(t), watts) for t in range(seconds + 1)]
    return series(pts, energy=[watts * t for t, _ in pts], **kw)  # type: ignore[arg-type]


def at(seconds: float) -> int:
    return T0 + round(seconds * S)


def write_csv(path: Path, samples: list[PowerSample]) -> Path:
    lines = [",".join(COLUMNS)] + [",".join(format_row(s)) for s in samples]
    path.write_text("\n".join(lines) + "\n")
    return path


# --- energies computed by hand -------------------------------------------------------------------


def test_constant_power_counter_and_trapezoid_agree_exactly() -> None:
    report = integrate_samples(constant(100.0, 10), at(2.5), at(7.5), 1)
    assert report.valid
    (gpu,) = report.gpus
    assert gpu.energy_source == "energy_counter"
    assert gpu.counter_energy_j == 500.0 and gpu.trapezoid_energy_j == 500.0
    assert gpu.avg_power_w == 100.0
    assert gpu.samples_in_window == 5  # t = 3, 4, 5, 6, 7
    assert gpu.max_gap_s == 1.0
    assert report.total_energy_j == 500.0


def test_linear_ramp_with_edges_between_samples() -> None:
    # p(t) = 100 + 10 t W; window [0.5, 9.5]: p = 105 and 195 at the edges, integral = 150 W * 9 s.
    pts = [(float(t), 100.0 + 10.0 * t) for t in range(11)]
    # True cumulative energy 100 t + 5 t^2 J; linear interpolation of it at the edges gives
    # E(0.5) = 52.5 and E(9.5) = 1305 + 97.5 = 1402.5, so the counter says 1350 J too.
    energy = [100.0 * t + 5.0 * t * t for t, _ in pts]
    report = integrate_samples(series(pts, energy=energy), at(0.5), at(9.5), 1)
    (gpu,) = report.gpus
    assert gpu.trapezoid_energy_j == 1350.0
    assert gpu.counter_energy_j == 1350.0
    assert gpu.avg_power_w == 150.0
    assert report.valid


def test_trapezoid_only_when_the_gpu_has_no_counter() -> None:
    # Edges at 0.5 s and 2.5 s interpolate to 200 W; 0.5*(200+300)/2 + 1*300 + 0.5*(300+200)/2 = 550 J.
    samples = series([(0.0, 100.0), (1.0, 300.0), (2.0, 300.0), (3.0, 100.0)])
    report = integrate_samples(samples, at(0.5), at(2.5), 1)
    (gpu,) = report.gpus
    assert gpu.energy_source == "power_trapezoid"
    assert gpu.counter_energy_j is None
    assert gpu.energy_j == 550.0 and gpu.avg_power_w == 275.0
    assert report.valid


def test_counter_is_used_only_where_every_sample_in_the_span_has_it() -> None:
    samples = constant(100.0, 4)
    holed = [
        samples[0],
        samples[1],
        PowerSample(samples[2].timestamp_ns, 0, UUID_A, 100.0, None),
        *samples[3:],
    ]
    report = integrate_samples(holed, at(0.5), at(3.5), 1)
    assert report.gpus[0].energy_source == "power_trapezoid"
    assert report.gpus[0].energy_j == 300.0
    # A hole outside the bracketing span does not matter.
    report = integrate_samples(holed, at(3.0), at(4.0), 1)
    assert report.gpus[0].energy_source == "energy_counter"


def test_window_edges_exactly_on_samples() -> None:
    report = integrate_samples(constant(80.0, 5), at(1), at(4), 1)
    assert report.valid and report.gpus[0].energy_j == 240.0


def test_two_gpus_sum_and_result_fields() -> None:
    samples = constant(100.0, 10) + constant(300.0, 10, uuid=UUID_B, index=1)
    report = integrate_samples(samples, at(1), at(6), 2)
    assert report.valid
    assert [g.key for g in report.gpus] == [UUID_A, UUID_B]
    assert report.total_energy_j == 2000.0
    fields = report.result_fields(output_tokens=500, total_tokens=4000, successful_requests=8)
    assert fields == {
        "power_valid": True,
        "power_invalid_reasons": [],
        "power_energy_source": "energy_counter",
        "power_window_s": 5.0,
        "avg_power_w": {UUID_A: 100.0, UUID_B: 300.0},
        "avg_total_gpu_power_w": 400.0,
        "total_gpu_energy_j": 2000.0,
        "joules_per_output_token": 4.0,
        "joules_per_total_token": 0.5,
        "joules_per_successful_request": 250.0,
    }


def test_token_counts_may_be_floats() -> None:
    report = integrate_samples(constant(100.0, 10), at(1), at(6), 1)
    fields = report.result_fields(output_tokens=250.0, total_tokens=1000.0, successful_requests=4)
    assert fields["joules_per_output_token"] == 2.0 and fields["joules_per_total_token"] == 0.5
    assert report.result_fields(float("nan"), 10.0, 1)["power_invalid_reasons"] == ["invalid_token_count"]


def test_gpu_without_uuid_is_keyed_by_index() -> None:
    samples = constant(50.0, 3, uuid="", index=5)
    fields = integrate_samples(samples, at(1), at(2), 1).result_fields(10, 20, 1)
    assert fields["avg_power_w"] == {"5": 50.0}


def test_mixed_energy_sources_are_named_mixed() -> None:
    no_counter = [PowerSample(s.timestamp_ns, 1, UUID_B, 100.0) for s in constant(100.0, 4)]
    report = integrate_samples(constant(100.0, 4) + no_counter, at(1), at(3), 2)
    assert report.result_fields(1, 1, 1)["power_energy_source"] == "mixed"


def test_invalid_report_exposes_no_metric() -> None:
    report = integrate_samples(constant(100.0, 10), at(1), at(6), 2)  # expects 2 GPUs, has 1
    fields = report.result_fields(output_tokens=500, total_tokens=4000, successful_requests=8)
    assert fields == {"power_valid": False, "power_invalid_reasons": ["gpu_count_mismatch"]}
    # The audit file still shows what was measured.
    body = report.validation_json()
    assert body["power_valid"] is False and body["gpus"][0]["energy_j"] == 500.0
    assert body["reasons"][0]["code"] == "gpu_count_mismatch"


def test_validation_json_round_trips_through_write_json(tmp_path: Path) -> None:
    report = integrate_samples(
        constant(100.0, 10), at(1.25), at(6.75), 1, reference_duration_ns=5_500_000_000
    )
    path = write_json(tmp_path / "power_validation.json", report.validation_json())
    body = read_json(path)
    assert body["schema_version"] == 1
    assert body["window"] == {
        "start_ns": at(1.25),
        "end_ns": at(6.75),
        "duration_s": 5.5,
        "reference_duration_s": 5.5,
        "clock": "wall_clock_utc_ns",
    }
    assert body["gpus"][0]["counter_vs_trapezoid_rel_diff"] == 0.0
    assert body["thresholds"]["max_gap_s"] == 3.0
    assert body["total_gpu_energy_j"] == 550.0


def test_csv_round_trip(tmp_path: Path) -> None:
    sample = PowerSample(T0, 3, UUID_A, 123.456, 987654321, 1980, 3201, 41, 99)
    assert parse_row(dict(zip(COLUMNS, format_row(sample)))) == sample
    parsed = read_power_csv(write_csv(tmp_path / "power.csv", constant(100.0, 3)))
    assert parsed.problems == [] and len(parsed.samples) == 4
    report = integrate_power(tmp_path / "power.csv", at(0.5), at(2.5), 1)
    assert report.valid and report.total_energy_j == 200.0


def test_status_sidecar_path() -> None:
    assert status_path(Path("/x/power.csv")) == Path("/x/power.sampler.json")


# --- every reason code ---------------------------------------------------------------------------


def _report_codes(report: PowerReport) -> list[str]:
    return report.reason_codes()


def _file(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "power.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def case_nvml_unavailable(tmp_path: Path) -> list[str]:
    path = _file(tmp_path, ",".join(COLUMNS) + "\n")
    status_path(path).write_text(
        json.dumps({"nvml_available": False, "reason": "nvml_unavailable: no driver"})
    )
    report = integrate_power(path, at(0), at(1), 1)
    assert report.reasons[0].message == "nvml_unavailable: no driver"
    assert report.result_fields(1, 1, 1) == {
        "power_valid": False,
        "power_invalid_reasons": ["nvml_unavailable"],
    }
    return _report_codes(report)


def case_telemetry_file_missing(tmp_path: Path) -> list[str]:
    return _report_codes(integrate_power(tmp_path / "absent.csv", at(0), at(1), 1))


def case_telemetry_file_unreadable(tmp_path: Path) -> list[str]:
    return _report_codes(integrate_power(tmp_path, at(0), at(1), 1))  # a directory


def case_telemetry_file_empty(tmp_path: Path) -> list[str]:
    return _report_codes(integrate_power(_file(tmp_path, ""), at(0), at(1), 1))


def case_telemetry_column_missing(tmp_path: Path) -> list[str]:
    path = _file(tmp_path, "timestamp_ns,gpu_index,gpu_uuid,energy_mj\n1,0,GPU-x,5\n")
    report = integrate_power(path, at(0), at(1), 1)
    assert "power_w" in report.reasons[0].message
    return _report_codes(report)


def case_invalid_sample_row(tmp_path: Path) -> list[str]:
    good = [",".join(format_row(s)) for s in constant(100.0, 4)]
    bad = [
        f"{at(4.5)},0,{UUID_A},abc,,,,,",
        f"{at(4.6)},0,{UUID_A},-5,,,,,",
        f"{at(4.7)},0,{UUID_A},nan,,,,,",
    ]
    path = _file(tmp_path, "\n".join([",".join(COLUMNS), *good, *bad]) + "\n")
    report = integrate_power(path, at(1), at(3), 1)
    assert "3 unparsable row(s)" in report.reasons[0].message
    assert report.gpus[0].energy_j == 200.0  # the good rows are still integrated, for the audit
    return _report_codes(report)


def case_no_samples(tmp_path: Path) -> list[str]:
    return _report_codes(integrate_power(_file(tmp_path, ",".join(COLUMNS) + "\n"), at(0), at(1), 1))


def case_window_invalid(tmp_path: Path) -> list[str]:
    return _report_codes(integrate_samples(constant(100.0, 4), at(3), at(3), 1))


def case_gpu_count_mismatch(tmp_path: Path) -> list[str]:
    return _report_codes(integrate_samples(constant(100.0, 4), at(1), at(3), 8))


def case_timestamps_not_monotonic(tmp_path: Path) -> list[str]:
    samples = constant(100.0, 4)
    swapped = [samples[0], samples[2], samples[1], *samples[3:]]
    report = integrate_samples(swapped, at(0.5), at(3.5), 1)
    assert report.gpus[0].energy_j == 300.0  # sorted before integrating
    return _report_codes(report)


def case_window_not_bracketed(tmp_path: Path) -> list[str]:
    early = integrate_samples(constant(100.0, 4), at(-0.1), at(3), 1)
    late = integrate_samples(constant(100.0, 4), at(1), at(4.1), 1)
    assert early.reason_codes() == late.reason_codes()
    assert late.gpus[0].energy_j is None and late.total_energy_j is None
    return _report_codes(late)


def case_sampling_gap_exceeded(tmp_path: Path) -> list[str]:
    exactly_three = series([(0.0, 100.0), (3.0, 100.0), (6.0, 100.0)])
    assert integrate_samples(exactly_three, at(1), at(5), 1).valid
    gap = series([(0.0, 100.0), (1.0, 100.0), (4.5, 100.0), (5.0, 100.0)])
    report = integrate_samples(gap, at(0.5), at(4.8), 1)
    assert report.gpus[0].max_gap_s == 3.5
    # A gap outside the samples that bracket the window does not matter.
    assert integrate_samples(gap, at(4.6), at(4.9), 1).valid
    return _report_codes(report)


def case_window_clock_mismatch(tmp_path: Path) -> list[str]:
    samples = constant(100.0, 120)
    # 10 s window: tolerance 0.5 s.
    assert integrate_samples(samples, at(1), at(11), 1, reference_duration_ns=9_600_000_000).valid
    # 100 s window: tolerance 1 s (1%).
    assert integrate_samples(samples, at(1), at(101), 1, reference_duration_ns=99_000_000_000).valid
    report = integrate_samples(samples, at(1), at(101), 1, reference_duration_ns=98_900_000_000)
    assert integrate_samples(
        samples, at(1), at(11), 1, reference_duration_ns=9_400_000_000
    ).reason_codes() == ["window_clock_mismatch"]
    return _report_codes(report)


def case_energy_counter_not_monotonic(tmp_path: Path) -> list[str]:
    pts = [(float(t), 100.0) for t in range(5)]
    report = integrate_samples(series(pts, energy=[0, 100, 200, 50, 150]), at(0.5), at(3.5), 1)
    assert report.gpus[0].energy_source == "power_trapezoid" and report.gpus[0].energy_j == 300.0
    return _report_codes(report)


def case_energy_counter_mismatch(tmp_path: Path) -> list[str]:
    pts = [(float(t), 100.0) for t in range(5)]
    # Counter 210 J/s vs 100 W of power: the counter wins, the disagreement invalidates.
    report = integrate_samples(series(pts, energy=[210.0 * t for t in range(5)]), at(1), at(3), 1)
    assert report.gpus[0].energy_j == 420.0 and report.gpus[0].trapezoid_energy_j == 200.0
    # Within 5%: fine.
    close = integrate_samples(series(pts, energy=[104.0 * t for t in range(5)]), at(1), at(3), 1)
    assert close.valid
    # Tiny windows get an absolute 1 J allowance.
    tiny = integrate_samples(series(pts, energy=[106.0 * t for t in range(5)]), at(1), at(1.1), 1)
    assert tiny.valid
    return _report_codes(report)


def case_invalid_token_count(tmp_path: Path) -> list[str]:
    report = integrate_samples(constant(100.0, 4), at(1), at(3), 1)
    assert report.valid
    for output_tokens, total_tokens in ((0, 10), (10, 0), (None, 10), (-1, 10)):
        fields = report.result_fields(output_tokens, total_tokens, 3)
        assert fields == {"power_valid": False, "power_invalid_reasons": ["invalid_token_count"]}
    return report.result_fields(0, 0, 3)["power_invalid_reasons"]


def case_invalid_request_count(tmp_path: Path) -> list[str]:
    report = integrate_samples(constant(100.0, 4), at(1), at(3), 1)
    assert report.result_fields(10, 20, None)["power_invalid_reasons"] == ["invalid_request_count"]
    return report.result_fields(10, 20, 0)["power_invalid_reasons"]


CASES: dict[str, Callable[[Path], list[str]]] = {
    name.removeprefix("case_"): fn for name, fn in globals().items() if name.startswith("case_")
}


def test_every_documented_code_has_a_case() -> None:
    assert set(CASES) == set(DESCRIPTIONS)


@pytest.mark.parametrize("code", sorted(DESCRIPTIONS))
def test_reason_code(code: str, tmp_path: Path) -> None:
    assert CASES[code](tmp_path) == [code]


def test_reasons_accumulate() -> None:
    samples = series([(0.0, 100.0), (5.0, 100.0)])
    report = integrate_samples(samples, at(1), at(6), 2, reference_duration_ns=1 * S)
    assert report.reason_codes() == [
        "window_clock_mismatch",
        "gpu_count_mismatch",
        "window_not_bracketed",
    ]


def test_readme_documents_every_reason_code() -> None:
    readme = (Path(__file__).resolve().parents[2] / "docs" / "power.md").read_text()
    section = readme.split("<!-- section:power -->")[1].split("<!-- /section:power -->")[0]
    assert [code for code in DESCRIPTIONS if f"`{code}`" not in section] == []

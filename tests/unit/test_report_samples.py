"""Per-request samples of a report: the block-at-a-time reader gives exactly what parsing each line as JSON
gives (AIPerf 0.13's real layout in any metric order, warmup, cancelled, failed, other units, missing TTFT,
lines that do not fit the compact layout, block edges); the samples file a point leaves is used only when it
matches its records; and the report reads the points' files in worker processes with the same result."""

from __future__ import annotations

import json
import os
import random
from array import array
from pathlib import Path

import pytest

from benchmarks.report_bench import record_line
from harness.point.record.samples_file import (
    SAMPLES_FILE,
    kept_latencies,
    read_samples_file,
    stamp,
    write_samples_file,
)
from harness.report.results import samples
from harness.report.results.samples import load_request_samples, read_request_samples

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _line(rng: random.Random, r: int) -> str:
    return record_line(rng, 100 + r, 4, 10_000)   # a successful profiled request


def _odd_lines(rng: random.Random, r: int) -> list[str]:
    """Records that must be left out, or that the compact reading hands to the JSON parser."""
    base = _line(rng, r)
    record = json.loads(base)
    metrics = record["metrics"]
    reordered = {"metadata": record["metadata"],
                 "metrics": {k: metrics[k] for k in sorted(metrics, reverse=True)}}   # TTFT before E2EL
    no_ttft = {**record, "metrics": {k: v for k, v in metrics.items() if k != "time_to_first_token"}}
    in_us = json.loads(base)
    in_us["metrics"]["request_latency"] = {"value": 351025.806, "unit": "us"}
    in_s = json.loads(base)
    in_s["metrics"]["time_to_first_token"] = {"value": 0.011, "unit": "s"}
    odd_unit = json.loads(base)
    odd_unit["metrics"]["request_latency"]["unit"] = "kg"
    mid_stream_error = {**record, "error": {"code": 502, "type": "Bad Gateway"}}
    compact = {"separators": (",", ":")}
    return [
        record_line(rng, 1, 4, 10_000),                                              # warmup
        record_line(rng, 9_999, 4, 10_000),                                          # cancelled at the cutoff
        record_line(rng, 997, 4, 10_000),                                            # failed (HTTP 500)
        json.dumps(reordered, **compact) + "\n",
        json.dumps(no_ttft, **compact) + "\n",
        json.dumps(in_us, **compact) + "\n",
        json.dumps(in_s, **compact) + "\n",
        json.dumps(odd_unit, **compact) + "\n",
        json.dumps(mid_stream_error, **compact) + "\n",
        json.dumps(record) + "\n",                                                  # spaced JSON
        base[: len(base) // 2] + "\n",                                              # truncated
        "\n",
    ]


def _by_lines(path: Path) -> tuple[list[float], list[float]]:
    e2el, ttft = array("d"), array("d")
    for line in path.read_bytes().splitlines():
        samples._read_line(line, e2el, ttft)
    return list(e2el), list(ttft)


def _real_lines() -> list[str]:
    """Every line AIPerf 0.13 wrote among the fixtures (some fixtures hold hand-written records)."""
    return [line + "\n" for p in sorted(FIXTURES.rglob("profile_export.jsonl")) for line in p.read_text().splitlines()
            if '"phase_kind":' in line]


@pytest.mark.parametrize("block", [256, 4096, 1 << 22])
def test_block_reader_equals_the_json_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    rng = random.Random(3)
    lines: list[str] = _real_lines()
    for r in range(400):
        lines.append(_line(rng, r))
        if r % 37 == 0:
            lines += _odd_lines(rng, r)
    path = tmp_path / "profile_export.jsonl"
    path.write_text("".join(lines).rstrip("\n"))   # the last line unterminated
    monkeypatch.setattr(samples, "_CHUNK_BYTES", block)
    got = read_request_samples(path)
    want_e2el, want_ttft = _by_lines(path)
    assert list(got.e2el) == want_e2el and list(got.ttft) == want_ttft
    real = sum(kept_latencies(json.loads(line)) is not None for line in _real_lines())
    # kept per group of odd lines: reordered, no TTFT, us, s, kg (read as ms), spaced
    assert len(want_e2el) == real + 400 + 6 * 11 and len(want_ttft) == real + 400 + 5 * 11


def test_real_aiperf_lines_are_read_compactly() -> None:
    """Successful lines of real runs (either metric order) and warmup lines never need the JSON parser."""
    for line in _real_lines():
        record = json.loads(line)
        if not record.get("error"):
            assert samples._compact_line(line.encode(), 0, len(line) - 1) is not None, line[:120]


def test_generated_records_take_the_compact_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(4)
    path = tmp_path / "profile_export.jsonl"
    path.write_text("".join(record_line(rng, r, 4, 60) for r in range(60)))   # warmup, profiled, cancelled
    monkeypatch.setattr(samples, "_read_line", lambda *a: pytest.fail("fell back to the JSON reader"))
    got = read_request_samples(path)
    assert len(got.e2el) == len(got.ttft) == 60 - 20 - 4


def _point_records(tmp_path: Path) -> Path:
    rng = random.Random(6)
    path = tmp_path / "aiperf" / "profile_export.jsonl"
    path.parent.mkdir(parents=True)
    lines = [record_line(rng, r, 4, 300) for r in range(300)] + _odd_lines(rng, 1)
    path.write_text("".join(lines))
    return path


def _write(path: Path) -> Path | None:
    source = stamp(path)
    return write_samples_file(path, [json.loads(line) for line in path.read_text().splitlines() if line[:1] == "{"
                                     and line.endswith("}")], source)


def test_the_samples_file_holds_what_the_records_give(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _point_records(tmp_path)
    assert _write(path) == path.parent / SAMPLES_FILE
    want = read_request_samples(path)
    monkeypatch.setattr(samples, "read_request_samples", lambda p: pytest.fail("parsed the records"))
    got = load_request_samples(path)
    assert list(got.e2el) == list(want.e2el) and list(got.ttft) == list(want.ttft)
    assert len(got.e2el) > len(got.ttft) > 200


def test_a_samples_file_of_records_that_changed_is_not_used(tmp_path: Path) -> None:
    path = _point_records(tmp_path)
    _write(path)
    with open(path, "a") as fh:
        fh.write(record_line(random.Random(1), 100, 4, 300))
    assert read_samples_file(path) is None
    assert len(load_request_samples(path).e2el) == len(read_request_samples(path).e2el)
    st = os.stat(path)
    _write(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))   # same size, touched
    assert read_samples_file(path) is None


def test_records_changed_while_read_leave_no_samples_file(tmp_path: Path) -> None:
    path = _point_records(tmp_path)
    _write(path)
    source = stamp(path)
    with open(path, "a") as fh:
        fh.write("\n")
    assert write_samples_file(path, [], source) is None and not (path.parent / SAMPLES_FILE).exists()


@pytest.mark.parametrize("damage", ["truncated", "longer", "no header", "bad header", "nan", "counts",
                                    "other source", "directory"])
def test_a_damaged_samples_file_is_not_used(tmp_path: Path, damage: str) -> None:
    path = _point_records(tmp_path)
    out = _write(path)
    assert out is not None
    data = out.read_bytes()
    header, body = data.split(b"\n", 1)
    fields = json.loads(header)
    if damage == "truncated":
        out.write_bytes(data[:-3])
    elif damage == "longer":
        out.write_bytes(data + b"\0" * 8)
    elif damage == "no header":
        out.write_bytes(b"x" * 5000)
    elif damage == "bad header":
        out.write_bytes(b"[1, 2]\n" + body)
    elif damage == "nan":
        out.write_bytes(header + b"\n" + body[:-8] + b"\x00\x00\x00\x00\x00\x00\xf8\x7f")
    elif damage == "counts":
        out.write_bytes(json.dumps({**fields, "e2el_count": fields["ttft_count"] - 1,
                                    "ttft_count": fields["e2el_count"] + 1}).encode() + b"\n" + body)
    elif damage == "other source":
        out.write_bytes(json.dumps({**fields, "source": "other.jsonl"}).encode() + b"\n" + body)
    else:
        out.unlink()
        out.mkdir()
    assert read_samples_file(path) is None
    got, want = load_request_samples(path), read_request_samples(path)
    assert list(got.e2el) == list(want.e2el) and list(got.ttft) == list(want.ttft)


def test_the_report_reads_record_files_in_workers_with_the_same_quantiles(tmp_path: Path) -> None:
    from harness.report.analysis.curves import group_curves
    from harness.report.render.build import _point_quantiles, distributions
    from harness.report.results.points import load_results

    rng = random.Random(5)
    fixture = json.loads((Path(__file__).parents[2] / "tests" / "fixtures" / "h200-power" / "point_result.json")
                         .read_text())
    for conc in (1, 2, 4):
        pdir = tmp_path / f"conc{conc}"
        (pdir / "aiperf").mkdir(parents=True)
        (pdir / "point_result.json").write_text(json.dumps({**fixture, "conc": conc}))
        (pdir / "aiperf" / "profile_export.jsonl").write_text("".join(_line(rng, r) for r in range(30 * conc)))
    curves = group_curves(load_results([tmp_path]))
    got = distributions(curves)
    assert len(got) == 3
    for (i, j), quantiles in got.items():
        conc = curves[i].points[j].conc
        path = curves[i].points[j].point_dir / "aiperf" / "profile_export.jsonl"
        assert quantiles == _point_quantiles(path) and quantiles[1] is not None and quantiles[1].n == 30 * conc

"""Per-request samples of a report: the block-at-a-time reader gives exactly what reading line by line gives
(warmup, cancelled, failed, other units, missing TTFT, lines that do not fit the fast layout, block edges),
and the report reads the points' files in worker processes with the same result."""

from __future__ import annotations

import json
import random
from array import array
from pathlib import Path

import pytest

from benchmarks.report_bench import RECORD
from harness.report import samples
from harness.report.samples import read_request_samples


def _line(rng: random.Random, r: int, phase: str = "profiling") -> str:
    e2el = rng.lognormvariate(8.0, 0.6)
    ttft = e2el * rng.uniform(0.03, 0.2)
    st = 1_795_958_834_000_000_000 + r * 10_000_000
    return RECORD % {"s": r % 4, "rid": f"{r:032x}", "t": r // 4, "c": st - 1000, "st": st, "ack": st + 9000,
                     "end": st + int(e2el * 1e6), "phase": phase, "e2el": e2el, "ttft": ttft, "tt2": ttft + 9.5,
                     "itl": 10.5, "dec": e2el - ttft, "icl": "10.0,11.5", "isl": 20000 + r, "osl": 300 + r,
                     "tot": 20300 + 2 * r, "tpu": 95.2}


def _odd_lines(rng: random.Random, r: int) -> list[str]:
    """Records the fast layout does not fit, or that must be left out."""
    base = _line(rng, r)
    return [
        _line(rng, r, phase="warmup"),
        base.replace('"was_cancelled":false', '"was_cancelled":true'),
        json.dumps({"metadata": {"benchmark_phase": "profiling", "was_cancelled": False},
                    "error": {"code": 500, "message": "boom"}}) + "\n",          # failed: no metrics
        base.replace('"request_latency":{"value":', '"request_latency":{"value":1', 1)
            .replace('"unit":"ms"},"time_to_first_token"', '"unit":"us"},"time_to_first_token"', 1),
        base.replace(',"time_to_first_token":{"value":', ',"time_to_first_tokenX":{"value":', 1),  # no TTFT
        json.dumps(json.loads(base), indent=None, separators=(", ", ": ")) + "\n",  # spaced JSON
        "\n",
    ]


def _by_lines(path: Path) -> tuple[list[float], list[float]]:
    e2el, ttft = array("d"), array("d")
    for line in path.read_bytes().splitlines():
        samples._read_line(line, e2el, ttft)
    return list(e2el), list(ttft)


@pytest.mark.parametrize("block", [256, 4096, 1 << 22])
def test_block_reader_equals_the_line_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    rng = random.Random(3)
    lines: list[str] = []
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
    assert len(want_e2el) == 400 + 3 * 11 and len(want_ttft) == 400 + 2 * 11   # the odd lines kept: us, no TTFT, spaced


def test_a_block_of_compact_records_takes_the_fast_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(4)
    path = tmp_path / "profile_export.jsonl"
    path.write_text("".join(_line(rng, r) for r in range(50)))
    monkeypatch.setattr(samples, "_read_line", lambda *a: pytest.fail("fell back to the line reader"))
    got = read_request_samples(path)
    assert len(got.e2el) == len(got.ttft) == 50


def test_the_report_reads_record_files_in_workers_with_the_same_quantiles(tmp_path: Path) -> None:
    from harness.report.build import _point_quantiles, distributions
    from harness.report.curves import group_curves
    from harness.report.load import load_results

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
    for (i, conc), quantiles in got.items():
        path = next(p for p in curves[i].points if p.conc == conc).point_dir / "aiperf" / "profile_export.jsonl"
        assert quantiles == _point_quantiles(path) and quantiles[1] is not None and quantiles[1].n == 30 * conc

"""`harness inspect` on real points (tests/fixtures/inspect/demo: the demo's c4 and c8 on the simulator, real AIPerf)
and on points whose cause is known: the findings recomputed by hand from the files, the JSON twin's series, a
clock-offset and a short power file (real NVML samples of tests/fixtures/h200-power moved onto the point's clock),
a warm-up overlap, and the bad inputs (missing, corrupt, failed)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.inspect.write import inspect_points

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "tests" / "fixtures" / "inspect" / "demo"
H200 = ROOT / "tests" / "fixtures" / "h200-power"


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    for name in ("conc4", "conc8"):
        shutil.copytree(DEMO / name, tmp_path / name)
    return tmp_path


def _export(pdir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((pdir / "aiperf" / "server_metrics_export.json").read_text())
    return data


def _window_slices(pdir: Path, name: str, key: str) -> list[float]:
    """A metric's per-slice `key` (summed over its series) for the slices that start inside AIPerf's window."""
    export = _export(pdir)
    start, end = (export["summary"]["phase_time_ranges"]["profiling"][k] for k in ("start_ns", "end_ns"))
    by_start: dict[int, float] = {}
    for series in export["metrics"][name]["series"]:
        for ts in series["timeslices"]:
            if start <= ts["start_ns"] < end:
                by_start[ts["start_ns"]] = by_start.get(ts["start_ns"], 0.0) + ts[key]
    return [by_start[k] for k in sorted(by_start)]


def test_c8_findings_name_the_pool_the_evictions_and_the_hit_rate_with_the_files_numbers(demo: Path,
                                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(demo / "conc8"), "--vs", str(demo / "conc4")]) == 0
    out = capsys.readouterr().out
    twin = json.loads((demo / "conc8" / "inspect_vs_conc4.json").read_text())
    c8 = {f["rule"]: f for f in twin["points"][0]["findings"]}
    usage = _window_slices(demo / "conc8", "sglang:token_usage", "max")
    full = sum(1 for u in usage if u >= 0.95)
    assert c8["kv_pool_full"]["n"] == len(usage) and c8["kv_pool_full"]["value"] == round(full / len(usage), 4)
    assert f"({full} of {len(usage)} slices;" in out
    evicted = sum(_window_slices(demo / "conc8", "sglang:evicted_tokens", "total"))
    assert evicted > 0 and c8["evictions"]["value"] == evicted and f"{evicted:,.0f} tokens evicted" in out
    prompt = sum(_window_slices(demo / "conc8", "sglang:prompt_tokens", "total"))
    cached = sum(_window_slices(demo / "conc8", "sglang:cached_tokens", "total"))
    summary = json.loads((demo / "conc8" / "aiperf" / "profile_export_aiperf.json").read_text())
    theory = summary["theoretical_prefix_cache_hit"]["avg"] / 100
    assert c8["hit_rate_below_trace"]["value"] == round(cached / prompt, 4)
    assert f"the trace's theoretical {100 * theory:.0f} %" in out
    assert "server_queue" in c8
    assert out.index("c8 (SIMULATED") < out.index("c4 (SIMULATED") < out.index("c8 vs c4:")
    assert "prefix-cache hit rate: c8" in out and "throughput: c8" in out


def test_the_json_twin_holds_the_series_the_requests_and_the_stability_block(demo: Path) -> None:
    done = inspect_points(demo / "conc8")
    assert done.html_path == demo / "conc8" / "inspect.html" and done.json_path == demo / "conc8" / "inspect.json"
    point = json.loads(done.json_path.read_text())["points"][0]
    server = point["series"]["server"]
    n = len(server["t"])
    assert n > 40 and all(len(server[k]) == n for k in ("num_running_reqs", "num_queue_reqs", "kv_used_tokens",
                                                        "token_usage", "hit_rate"))
    assert server["t"] == sorted(server["t"]) and server["t"][0] < 0 < server["t"][-1]   # warm-up, then the window
    records = [json.loads(x) for x in (demo / "conc8" / "aiperf" / "profile_export.jsonl").read_text().splitlines()]
    assert len(point["requests"]) == len(records)
    first = min(records, key=lambda r: r["metadata"]["request_start_ns"])
    req = point["requests"][0]
    assert req["request_start_ns"] == first["metadata"]["request_start_ns"]
    assert req["ttft_ms"] == first["metrics"]["time_to_first_token"]["value"]
    assert req["e2el_ms"] == first["metrics"]["request_latency"]["value"]
    for key in ("source_trace_id", "conversation_id", "worker_id", "credit_issued_ns", "request_end_ns", "tpot_ms",
                "isl", "osl", "phase", "cancelled"):
        assert key in req
    assert point["series"]["batch_log"]["t"] and point["series"]["truth"]
    record = json.loads((demo / "conc8" / "point_result.json").read_text())
    assert point["stability"] == record["stability"]
    assert point["stability"]["root_trajectory_kish_effective_count"] > 0
    assert point["stability"]["reason"] == "duration_shorter_than_window"   # the demo's 45 s windows
    assert "the profiling window is shorter than one 600 s window" in done.html_path.read_text()   # said in words
    split = point["time_split"]
    assert [p["part"] for p in split["server"]["parts"]] == ["queue wait", "prefill", "decode", "client"]
    assert split["simulator_truth"]["per_request"]


def _with_power(pdir: Path, shift_s: float = 0.0, keep_s: float | None = None) -> None:
    """The real H200 NVML samples (tests/fixtures/h200-power/power.csv) moved onto this point's window, repeated to
    cover it from 5 s before to 5 s after (or only its first `keep_s` seconds)."""
    start, end = (_export(pdir)["summary"]["phase_time_ranges"]["profiling"][k] for k in ("start_ns", "end_ns"))
    rows = list(csv.DictReader((H200 / "power.csv").open()))
    t0 = int(rows[0]["timestamp_ns"])
    span = int(rows[-1]["timestamp_ns"]) - t0
    stop = end + 5 * 10**9 if keep_s is None else start + int(keep_s * 1e9)
    with open(pdir / "power.csv", "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        base, k = start - 5 * 10**9 + int(shift_s * 1e9), 0
        while True:
            for row in rows:
                ts = base + k * (span + 100_000_000) + int(row["timestamp_ns"]) - t0
                if ts > stop:
                    return
                writer.writerow({**row, "timestamp_ns": ts})
            k += 1


def test_c4s_lanes_idle_between_calls_are_named_with_the_records_figure(demo: Path) -> None:
    record = json.loads((demo / "conc4" / "point_result.json").read_text())
    achieved = record["achieved_concurrency"]["sessions"]
    assert achieved < 0.9 * 4   # the demo's c4: its lanes think between calls
    rules = {f.rule: f for f in inspect_points(demo / "conc4").views[0].findings}
    assert rules["lanes_idle"].value == round(achieved, 4) and f"{achieved:.2f} of the target 4" in rules["lanes_idle"].text
    assert "kv_pool_full" in rules and "server_queue" not in rules and "hit_rate_below_trace" not in rules


def test_cancellations_at_the_cutoff_are_marked_where_they_happened(demo: Path) -> None:
    record = json.loads((demo / "conc8" / "point_result.json").read_text())
    record["request_accounting"]["cancelled_at_cutoff"] = 79   # the H200 seed's drain
    (demo / "conc8" / "point_result.json").write_text(json.dumps(record))
    done = inspect_points(demo / "conc8")
    rules = {f.rule: f for f in done.views[0].findings}
    assert rules["cutoff_cancellations"].value == 79
    assert "79 requests cancelled at the end of the window" in done.html_path.read_text()


def test_power_samples_that_stop_early_and_a_summary_an_hour_off_are_named(demo: Path) -> None:
    pdir = demo / "conc4"
    _with_power(pdir)
    (pdir / "agentic_power_timezone_offset.txt").write_text("+00:00\n")   # the zone the fixture's AIPerf wrote in
    rules = {f.rule: f for f in inspect_points(pdir).views[0].findings}
    assert "power_not_bracketing" not in rules and "power_clock_offset" not in rules
    (pdir / "agentic_power_timezone_offset.txt").write_text("+01:00\n")   # the H200 seed: naive times read an hour off
    _with_power(pdir, keep_s=10.0)
    view = inspect_points(pdir).views[0]
    rules = {f.rule: f for f in view.findings}
    assert rules["power_clock_offset"].value == pytest.approx(-3600.0, abs=1.0)
    assert "bound 0.50 s" in rules["power_clock_offset"].text or "bound" in rules["power_clock_offset"].text
    assert rules["power_not_bracketing"].value == 1 and rules["power_not_bracketing"].n == 1
    assert view.data["series"]["power"]["gpus"]


def test_a_warmup_request_running_into_the_window_is_named(demo: Path) -> None:
    pdir = demo / "conc4"
    start = _export(pdir)["summary"]["phase_time_ranges"]["profiling"]["start_ns"]
    path = pdir / "aiperf" / "profile_export.jsonl"
    records = [json.loads(x) for x in path.read_text().splitlines()]
    warm = next(r for r in records if r["metadata"]["benchmark_phase"] == "warmup")
    warm["metadata"]["request_end_ns"] = start + 2_500_000_000   # still running 2.5 s into the window
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    rules = {f.rule: f for f in inspect_points(pdir).views[0].findings}
    assert rules["warmup_overlap"].value >= 1 and "until 2.5 s" in rules["warmup_overlap"].text


def test_missing_inputs_drop_their_panels_with_a_reason(demo: Path) -> None:
    pdir = demo / "conc4"
    (pdir / "aiperf" / "server_metrics_export.json").unlink()
    (pdir / "sim_truth.jsonl").unlink()
    (pdir / "server.log").write_text("no batch lines here\n")
    view = inspect_points(pdir).views[0]
    assert "no aiperf/server_metrics_export.json" in view.data["absent"]["server_metrics"]
    assert "sim_truth.jsonl" in view.data["absent"]["truth"]
    assert "batch_log" in view.data["absent"]
    assert view.data["time_split"]["server"]["reason"].startswith("no server-metrics export")
    page = (pdir / "inspect.html").read_text()
    assert "Not drawn" in page and "KV pool use" not in page and "Requests: in flight" in page


@pytest.mark.parametrize(("name", "damage"), [
    ("status.json", b'{"state": "comp'),
    ("point_result.json", b"[1, 2"),
    ("aiperf/server_metrics_export.json", b"{}garbage"),
    ("aiperf/profile_export.jsonl", b'{"metadata": {}}\nnot json\n{"metadata": {}}\n'),
])
def test_a_corrupt_file_is_one_line_naming_it(demo: Path, name: str, damage: bytes,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (demo / "conc8" / name).write_bytes(damage)
    assert main(["inspect", str(demo / "conc8")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and name.split("/")[-1] in err[0], err
    assert not (demo / "conc8" / "inspect.html").exists()


def test_a_record_of_another_structure_is_one_line_naming_it(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = json.loads((demo / "conc8" / "point_result.json").read_text())
    record["request_accounting"] = ["not", "a", "mapping"]
    (demo / "conc8" / "point_result.json").write_text(json.dumps(record))
    assert main(["inspect", str(demo / "conc8")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {demo / 'conc8' / 'point_result.json'}: not the structure its writer leaves "
        "(AttributeError: 'list' object has no attribute 'get')")


def test_a_directory_that_is_no_point_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["inspect", str(tmp_path)]) == 2
    assert "not a point's directory" in capsys.readouterr().err


def test_a_secret_in_the_points_own_words_reaches_neither_page_nor_twin(demo: Path) -> None:
    secret = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    record = json.loads((demo / "conc8" / "point_result.json").read_text())
    record["variant"] = f"HF_TOKEN={secret}"
    (demo / "conc8" / "point_result.json").write_text(json.dumps(record))
    done = inspect_points(demo / "conc8")
    assert secret not in done.html_path.read_text() and secret not in done.json_path.read_text()
    assert "HF_TOKEN=" in done.json_path.read_text()


def test_the_command_a_sweep_prints_runs_as_printed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from harness.commands.running.sweep import inspect_hint
    from harness.report.analysis.curves import group_curves
    from harness.report.results.points import load_results_noted

    run = tmp_path / "runs" / "quickstart-sim"
    for name in ("conc4", "conc8"):
        shutil.copytree(DEMO / name, run / name)
    monkeypatch.chdir(tmp_path)
    hint = inspect_hint(group_curves(load_results_noted([Path("runs/quickstart-sim")])[0]))
    assert hint == "harness inspect runs/quickstart-sim/conc8 --vs runs/quickstart-sim/conc4"
    assert main(hint.split()[1:]) == 0
    assert "[kv_pool_full;" in capsys.readouterr().out
    assert (run / "conc8" / "inspect_vs_conc4.html").is_file()


def test_a_skewed_summary_window_is_drawn_beside_the_utc_window(demo: Path) -> None:
    from datetime import datetime, timedelta

    pdir = demo / "conc4"
    _with_power(pdir)
    (pdir / "agentic_power_timezone_offset.txt").write_text("+00:00\n")
    path = pdir / "aiperf" / "profile_export_aiperf.json"
    summary = json.loads(path.read_text())
    for key in ("start_time", "end_time"):   # AIPerf's naive times 4 s late, as a skewed clock writes them
        summary[key] = (datetime.fromisoformat(summary[key]) + timedelta(seconds=4)).isoformat()
    path.write_text(json.dumps(summary))
    done = inspect_points(pdir)
    rules = {f.rule: f for f in done.views[0].findings}
    assert rules["power_clock_offset"].value == pytest.approx(4.0, abs=0.05)
    page = done.html_path.read_text()
    assert "AIPerf window (UTC)" in page and "integrated (+4.0 s)" in page


def _hues_apart(colors: list[str]) -> None:
    import colorsys
    import itertools

    from harness.inspect.svg_chart import PALETTE

    def hue(color: str) -> float:
        r, g, b = (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
        return colorsys.rgb_to_hsv(r, g, b)[0] * 360

    assert PALETTE[4] not in colors                                       # the red of failed requests
    for a, b in itertools.combinations(colors, 2):
        apart = abs(hue(a) - hue(b))
        assert min(apart, 360 - apart) >= 45, (a, b)


def test_the_series_of_two_points_have_hues_told_apart_at_a_glance() -> None:
    from harness.inspect.page import _colors

    first, second = _colors(0, True), _colors(1, True)
    assert first[0] == first[1] and first[2] == first[3]   # a pair per point, its two series told apart by dash
    _hues_apart(sorted({*first, *second}))


def test_one_points_series_each_have_their_own_hue(demo: Path) -> None:
    """On one point's page the four series of the load panel (client in flight and waiting, server running and
    queued) are four hues, not two told apart by dash alone."""
    import re

    from harness.inspect.page import _colors

    _hues_apart(list(_colors(0, False)))
    page = inspect_points(demo / "conc8").html_path.read_text()
    svg = page.split("Requests: in flight and waiting", 1)[1].split("</svg>", 1)[0]
    assert len(set(re.findall(r'<polyline fill="none" stroke="(#[0-9a-f]{6})"', svg))) == 4

"""Progress lines: the server's last meaningful log line; the client's window, requests, tok/s and E2EL p50."""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

from harness.point.replay.progress import ClientLiveProgress
from harness.point.servers.load_progress import ServerLoadProgress
from harness.point.state.progress_line import PlainDisplay, last_meaningful_line
from harness.point.state.status import PointStatus
from harness.recipe.points import load_plans

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "tests" / "fixtures" / "results" / "sim-run" / "quickstart-sim" / "conc4" / "aiperf" / \
    "profile_export.jsonl"


def test_last_meaningful_line_skips_access_logs_and_resolves_carriage_returns():
    log = ("[2026-12-01 00:00:01] Load weight begin. avail mem=139.2 GB\n"
           "Loading safetensors checkpoint shards:  10% Completed | 8/80\rLoading safetensors checkpoint shards:"
           "  45% Completed | 36/80\n"
           'INFO:     127.0.0.1:5555 - "GET /health HTTP/1.1" 503 Service Unavailable\n'
           "\x1b[2K----\n\n")
    assert last_meaningful_line(log) == "Loading safetensors checkpoint shards:  45% Completed | 36/80"
    assert last_meaningful_line('x - "GET /health HTTP/1.1" 200\n') is None
    assert len(last_meaningful_line("a" * 500) or "") == 160


def _plan():
    _, plans = load_plans(ROOT / "recipes" / "quickstart-sim.yaml", ["c4"], ["client.duration_s=60"])
    return plans[0]


def test_server_loading_line(tmp_path, capsys):
    status = PointStatus(tmp_path, 4, "quickstart-sim")
    status.phase("loading")
    (tmp_path / "server.log").write_text("Capture cuda graph begin.\n")
    p = ServerLoadProgress(_plan(), status, tmp_path / "server.log", 1800, every_s=0.01)
    time.sleep(0.02)
    p.tick()
    p.close()
    out = capsys.readouterr().out
    assert out.startswith("c4 server loading 0 s (ready budget 1800 s): Capture cuda graph begin.")
    assert "[progress] c4 server loading" in (tmp_path / "harness.log").read_text()


def test_client_line_through_warmup_window_and_drain(tmp_path):
    status = PointStatus(tmp_path, 4, "quickstart-sim")
    aiperf = tmp_path / "aiperf"
    aiperf.mkdir()
    p = ClientLiveProgress(_plan(), aiperf, status, every_s=30)
    assert isinstance(p.display, PlainDisplay)   # not a terminal under pytest
    line, done, total = p.line()
    assert line.startswith("c4 AIPerf warming up all 4 lanes (") and "then the 60 s window" in line and done is None
    status.phase("profiling")
    lines = RECORDS.read_text().splitlines(keepends=True)
    (aiperf / "profile_export.jsonl").write_text("".join(lines[:10]) + lines[10][:40])   # a half-written line
    line, done, total = p.line()
    assert line.startswith("c4 profiling 0/60 s (ETA 60 s): ") and total == 60
    recs = [json.loads(x) for x in lines]
    ok = [r for r in recs if not r.get("error") and r["metadata"].get("benchmark_phase") == "profiling"]
    first = [r for r in recs[:10] if r in ok]
    assert f"{len(first)} requests, " in line
    (aiperf / "profile_export.jsonl").write_text("".join(lines))
    line, _, _ = p.line()
    p50 = statistics.median(r["metrics"]["request_latency"]["value"] / 1e3 for r in ok)
    errors = sum(1 for r in recs if r.get("error") and r["metadata"].get("benchmark_phase") == "profiling")
    assert f"{len(ok)} requests, {errors} errors, " in line and f"E2EL p50 {p50:.2f} s" in line
    status.data["phases"]["profiling"] = time.time_ns() - 61 * 10**9
    line, done, total = p.line()
    assert line.startswith("c4 window done (60 s): ") and "draining in-flight requests" in line and done == 60
    assert "61" not in line.split(":")[0]   # never a time past the window
    grace = p.plan.client.grace_s
    status.data["phases"]["profiling"] = time.time_ns() - int((60 + grace + 30) * 1e9)
    p.waiting = lambda: "no client progress for 40 s (fails as client_stalled at 60 s)"
    line, done, total = p.line()
    assert "draining" not in line and "grace over 30 s ago, waiting for AIPerf to end its last requests" in line
    assert line.endswith("; no client progress for 40 s (fails as client_stalled at 60 s)") and done == 60


def test_the_bar_keeps_its_width_and_the_line_wraps_on_an_80_column_terminal():
    import io
    import re

    from rich.console import Console

    from harness.point.state.progress_line import BarDisplay

    buf = io.StringIO()
    bar = BarDisplay(Console(file=buf, width=80, force_terminal=True, color_system=None))
    line = "c2 profiling 12/30 s (ETA 18 s): 13 requests, 0 errors, 61 out tok/s, E2EL p50 0.75 s"
    bar.show(line, 12.0, 30.0)
    bar.close()
    frames = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", buf.getvalue())
    last = frames.replace("\r", "\n").strip().split("\n")
    drawn = [ln for ln in last if "c2 profiling" in ln][-1]
    assert "━━━━━━━━━" in drawn and drawn.index("c2 profiling") >= 26   # a 24-cell bar, 12/30 filled, not squeezed away
    assert " ".join(" ".join(last).split()).endswith("E2EL p50 0.75 s")  # the whole line, wrapped, not cut

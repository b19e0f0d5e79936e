"""`harness history`: per config and point, the metric of each store run with its 95 % interval, a mark where a
setting (or image, SGLang, client, hardware) changed, failed runs as rows with their state; table, PNG and page."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main as cli_main
from tests.store_support import latencies, store_url, write_point

__all__ = ["store_url"]


def test_history_marks_the_change_and_keeps_failed_runs(store_url: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    for n, (median, mrr, state) in enumerate(((5.0, 32, "completed"), (9.0, 2, "completed"), (5.0, 32, "completed"),
                                              (5.0, 32, "failed")), start=1):
        run = tmp_path / f"n{n}"
        write_point(run / "quickstart-sim" / "conc4", attempt=f"n{n}", e2el=latencies(40, median, n), state=state,
                    settings={"args": {"max-running-requests": mrr}}, start_ns=1_800_000_000 * 10**9 + n * 86400 * 10**9)
        assert cli_main(["ingest", str(run), "--db", store_url]) == 0
    capsys.readouterr()
    out_dir = tmp_path / "hist"
    assert cli_main(["history", "--db", store_url, "--config", "quickstart-sim", "--point", "c4",
                     "--out", str(out_dir)]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert [r[0] for r in rows] == ["1", "2", "3", "4"]
    assert "changed: setting args.max-running-requests: 32 -> 2" in out
    assert "changed: setting args.max-running-requests: 2 -> 32" in out
    assert rows[3][-1] == "failed" and "changed" not in " ".join(rows[3]) and rows[0][5].startswith("[")   # a failed run: no value, its state
    assert (out_dir / "history.png").read_bytes()[:4] == b"\x89PNG"
    page = (out_dir / "history.html").read_text()
    assert "max-running-requests: 32 -&gt; 2" in page and "data:image/png;base64," in page
    assert cli_main(["history", "--db", store_url, "--tag", "none-such", "--out", str(out_dir)]) == 2
    assert "no entries match tag=none-such" in capsys.readouterr().err

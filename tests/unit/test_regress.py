"""`harness regress`: per config, point and metric the change with compare's interval, a tolerance, a family
correction named in the output, what changed between the sides, and exit 1 regression / 0 none / 4 not comparable;
sides from run directories or store selections (SQLite, and PostgreSQL where HARNESS_TEST_POSTGRES_URL is set)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.cli import main as cli_main
from harness.report.analysis.confidence import adjust, mean_interval, percentile_change, t_quantile, welch_change
from tests.store_support import latencies, store_url, write_point

__all__ = ["store_url"]


def night(tmp_path: Path, name: str, median: float, seed: int, runs: int = 2, mrr: int = 32,
          client: str = "1.0.12", tput: float = 1000.0, **kw: object) -> Path:
    run = tmp_path / name
    point = run / "quickstart-sim" / "conc4"
    settings = {"image": "img", "engine": "sim", "args": {"max-running-requests": mrr}}
    for i in range(runs):
        target = point if i == runs - 1 else point / "attempts" / f"a{i}"
        write_point(target, attempt=f"{name}-{i}", e2el=latencies(60, median, seed=seed * 10 + i), settings=settings,
                    client_version=client, tput=tput * (1 + 0.01 * i), **kw)  # type: ignore[arg-type]
    return run


def test_the_statistics_match_their_definitions() -> None:
    assert t_quantile(0.975, 1) == pytest.approx(12.7062047, rel=1e-6)
    assert t_quantile(0.975, 9) == pytest.approx(2.2621572, rel=1e-6)
    iv = mean_interval([10.0, 12.0, 11.0])
    assert iv is not None and (iv.mean, iv.std) == pytest.approx((11.0, 1.0))
    assert (iv.low, iv.high) == pytest.approx((11 - 4.3026527 / 3 ** 0.5, 11 + 4.3026527 / 3 ** 0.5), rel=1e-6)
    assert iv.cv_pct == pytest.approx(100 / 11) and mean_interval([1.0]) is None
    assert adjust([0.01, 0.04, 0.03, 0.2], "holm") == pytest.approx([0.04, 0.09, 0.09, 0.2])
    assert adjust([0.01, 0.04, 0.03, 0.2], "bh") == pytest.approx([0.04, 0.16 / 3, 0.16 / 3, 0.2])
    same = percentile_change(latencies(50, 1.0, 1), latencies(50, 1.0, 1), 0.9)
    assert same.low_pct is not None and same.high_pct is not None and same.low_pct < 0 < same.high_pct
    assert welch_change([1.0], [2.0]).reason is not None   # one run a side: no interval


def test_a_percentile_change_whose_interval_excludes_zero_has_a_p_value_that_agrees() -> None:
    # a heavy-tailed baseline against one ten times slower: the p-value inverts the interval it prints
    rng = np.random.default_rng(7)
    base = list(np.exp(rng.normal(-1.5, 1.2, 60)))
    slow = list(10.0 * np.exp(rng.normal(-1.5, 1.2, 48)))
    change = percentile_change(base, slow, 0.9)
    assert change.low_pct is not None and change.low_pct > 0 and change.p is not None
    assert change.p < 0.05 / 5   # beyond zero even after Holm over a family of five
    same = percentile_change(base, list(np.exp(rng.normal(-1.5, 1.2, 48))), 0.9)
    assert same.p is not None and same.p > 0.05


def test_a_slower_night_is_a_regression_naming_the_metric_and_the_setting(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    a, b = night(tmp_path, "n1", 5.0, 1), night(tmp_path, "n2", 9.0, 2, mrr=2, tput=700.0)
    summary = tmp_path / "summary.md"
    assert cli_main(["regress", "--baseline", str(a), "--candidate", str(b), "--markdown", str(summary)]) == 1
    out = capsys.readouterr().out
    assert "Holm-corrected over" in out and "tolerance 5%" in out
    assert "setting args.max-running-requests: 32 -> 2" in out
    line = out.strip().splitlines()[-1]
    assert line.startswith("gate: REGRESSION") and "E2EL p90" in line and "E2EL p50" in line
    md = summary.read_text()
    assert md.startswith("## Regression gate ❌") and "| E2EL p90 (s) |" in md and "**REGRESSION**" in md
    assert cli_main(["regress", "--baseline", str(a), "--candidate", str(b), "--correction", "bh"]) == 1
    assert "Benjamini-Hochberg-corrected" in capsys.readouterr().out


def test_a_night_like_the_first_is_within_noise(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, c = night(tmp_path, "n1", 5.0, 1), night(tmp_path, "n3", 5.0, 3)
    assert cli_main(["regress", "--baseline", str(a), "--candidate", str(c)]) == 0
    out = capsys.readouterr().out
    assert "within noise" in out and out.strip().splitlines()[-1].startswith("gate: no regression")
    # a change beyond noise but within the tolerance is no regression either
    d = night(tmp_path, "n4", 5.1, 1)
    assert cli_main(["regress", "--baseline", str(a), "--candidate", str(d), "--tolerance", "50%"]) == 0


def test_different_clients_are_not_comparable_unless_told(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = night(tmp_path, "n1", 5.0, 1), night(tmp_path, "n2", 5.0, 2, client="1.0.13")
    assert cli_main(["regress", "--baseline", str(a), "--candidate", str(b)]) == 4
    out = capsys.readouterr().out
    assert "NOT COMPARABLE" in out and "client version 1.0.12 vs 1.0.13 (pass --allow-client-change" in out
    assert cli_main(["regress", "--baseline", str(a), "--candidate", str(b), "--allow-client-change"]) == 0


def test_failed_and_invalid_points_never_enter_a_baseline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad"
    write_point(bad / "q" / "conc4", state="failed", attempt="x")
    assert cli_main(["regress", "--baseline", str(bad), "--candidate", str(night(tmp_path, "n1", 5.0, 1))]) == 2
    assert "no completed valid point there" in capsys.readouterr().err
    cand = night(tmp_path, "n2", 5.0, 2)
    write_point(cand / "quickstart-sim" / "conc8", conc=8, state="failed", attempt="y")
    assert cli_main(["regress", "--baseline", str(night(tmp_path, "n3", 5.0, 3)), "--candidate", str(cand)]) == 0
    assert "not judged (failed or invalid): quickstart-sim c8 (failed)" in capsys.readouterr().out


def test_sides_from_store_selections(store_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, median, mrr in (("n1", 5.0, 32), ("n2", 9.0, 2), ("n3", 5.0, 32)):
        assert cli_main(["ingest", str(night(tmp_path, name, median, int(name[1]), mrr=mrr)), "--db", store_url]) == 0
    capsys.readouterr()
    assert cli_main(["regress", "--baseline", "run=1", "--candidate", "run=2", "--db", store_url]) == 1
    assert "setting args.max-running-requests: 32 -> 2" in capsys.readouterr().out
    assert cli_main(["regress", "--baseline", "last=1,skip=2", "--candidate", "last=1", "--db", store_url]) == 0
    assert cli_main(["regress", "--baseline", "last=2,skip=1,config=nope", "--candidate", "last=1",
                     "--db", store_url]) == 2
    assert cli_main(["regress", "--baseline", "colour=blue", "--candidate", "last=1", "--db", store_url]) == 2
    assert "unknown key 'colour'" in capsys.readouterr().err


def test_a_metric_without_an_interval_is_named_as_not_judged(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """One run of 60 requests a side, its p90 three times slower: no whole-run interval (one run) and a p90 with an
    interval; with 20 requests a side the p90 has none (42 needed) and the last line says so."""
    def short(name: str, median: float, seed: int) -> Path:
        run = tmp_path / name
        write_point(run / "quickstart-sim" / "conc4", attempt=name, e2el=latencies(20, median, seed=seed),
                    settings={"image": "img", "engine": "sim"})
        return run

    assert cli_main(["regress", "--baseline", str(short("a", 5.0, 1)), "--candidate", str(short("b", 15.0, 2))]) == 1
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("gate: REGRESSION") and "E2EL p50" in line and "E2EL p90" not in line
    assert cli_main(["regress", "--baseline", str(short("c", 5.0, 3)), "--candidate", str(short("d", 5.1, 4))]) == 0
    out = capsys.readouterr().out
    rows = {r.split("  ")[1].strip(): r for r in out.splitlines() if r.startswith("  ") and not r.startswith("  metric")}
    assert "20 vs 20 requests" in rows["E2EL p90 (s)"]   # each row says what its figures rest on
    assert all(("requests" in r) != ("runs" in r) for r in rows.values()), rows
    line = out.strip().splitlines()[-1]
    assert line.startswith("gate: no regression (every judged change")
    assert "; not judged, no interval: " in line
    assert "quickstart-sim c4 E2EL p90 (s) [fewer than 42 requests (20 vs 20): no interval]" in line

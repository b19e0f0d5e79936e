"""Three simulator nights of the quickstart c4, each `--repeat 2` (night 2 with a setting that
really slows it, `args.max-running-requests=2`; night 3 as night 1). Each `harness run` lands in the store by itself
(the automatic ingest, one line saying where). `harness regress` of night 1 vs 2 exits 1 naming E2EL and the changed
setting; night 1 vs 3 exits 0 within noise; from the run directories, from store selections in the SQLite store the
runs wrote, and from a real PostgreSQL (HARNESS_TEST_POSTGRES_URL, the same tests). `harness history` shows the three
nights with the setting change marked."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.store_support import store_url

__all__ = ["store_url"]
pytestmark = pytest.mark.long   # three nights of two runs each, overlapping: about five minutes

ROOT = Path(__file__).resolve().parents[2]
# 60 s windows: the slowed night serves about 0.4 requests/s, about 48 over its two runs, and a p90's
# distribution-free interval needs 42 a side (a valid point needs 10)
SHORT = ["--duration", "60", "--set", "client.warmup_requests_per_lane=1", "--set", "client.burst_phase_starts=true"]
SLOWER = ["--set", "args.max-running-requests=2"]


@dataclass
class Nights:
    dirs: list[Path]
    db: Path                # the SQLite store the runs ingested into themselves
    outputs: list[str]


def _env(db: str) -> dict[str, str]:
    return {**os.environ, "HARNESS_PROGRESS": "plain", "HARNESS_DB": db}


def _exe() -> str:
    return str(Path(sys.executable).with_name("harness"))


def harness(argv: list[str], cwd: Path, db: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_exe(), *argv], cwd=cwd, env=_env(db), capture_output=True, text=True, timeout=timeout,
                          check=False)


def _first_run_done(out: Path, night: subprocess.Popen[str], timeout: float = 600) -> None:
    """Until the night's first run has its record (its second has started) or the night has ended."""
    deadline = time.monotonic() + timeout
    while night.poll() is None and not any(out.rglob("point_result.json")):
        assert time.monotonic() < deadline, f"{out}: no first run within {timeout} s"
        time.sleep(1)


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Nights:
    """Each night starts when the one before has finished its first run: it has two runs to go against the
    other's one, so the nights still end, and land in the store, in their order."""
    cwd = tmp_path_factory.mktemp("nights")
    (cwd / "recipes").symlink_to(ROOT / "recipes")
    db = cwd / "store" / "results.sqlite3"
    dirs: list[Path] = []
    running: list[subprocess.Popen[str]] = []
    try:
        for n, extra in enumerate(([], SLOWER, []), start=1):
            if running:
                _first_run_done(dirs[-1], running[-1])
            out = cwd / f"night{n}"
            with (cwd / f"night{n}.out").open("w") as out_file, (cwd / f"night{n}.err").open("w") as err_file:
                running.append(subprocess.Popen(
                    [_exe(), "run", "recipes/quickstart-sim.yaml", "--point", "c4", "--repeat", "2", *SHORT, *extra,
                     "--out", str(out)], cwd=cwd, env=_env(str(db)), stdout=out_file, stderr=err_file, text=True))
            dirs.append(out)
        outputs = []
        for n, night in enumerate(running, start=1):
            night.wait(timeout=900)
            stdout, stderr = ((cwd / f"night{n}.{kind}").read_text() for kind in ("out", "err"))
            assert night.returncode == 0, stdout[-3000:] + stderr[-3000:]
            outputs.append(stdout)
    finally:   # a night that failed, or one that never ended, leaves none of the others running
        for night in running:
            if night.poll() is None:
                night.terminate()
                night.wait(timeout=120)
    return Nights(dirs, db, outputs)


def test_each_run_lands_in_the_store_by_itself(nights: Nights) -> None:
    for n, out in enumerate(nights.outputs, start=1):
        assert out.strip().splitlines()[-1] == f"results store: 2 new entries as run {n}, 0 already there -> {nights.db}"


def _regress(nights: Nights, db: str, baseline: str, candidate: str) -> subprocess.CompletedProcess[str]:
    return harness(["regress", "--baseline", baseline, "--candidate", candidate], nights.dirs[0].parent, db)


def _check(slower: subprocess.CompletedProcess[str], same: subprocess.CompletedProcess[str]) -> None:
    assert slower.returncode == 1, slower.stdout + slower.stderr
    last = slower.stdout.strip().splitlines()[-1]
    # the slower night's latencies: which percentiles clear the corrected intervals varies with the windows' samples
    assert last.startswith("gate: REGRESSION") and ("E2EL p" in last or "TTFT p" in last)
    assert "setting args.max-running-requests: 32 -> 2" in slower.stdout
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.strip().splitlines()[-1].startswith("gate: no regression")
    assert "within noise" in same.stdout


def test_regress_from_the_run_directories(nights: Nights) -> None:
    d1, d2, d3 = (str(d) for d in nights.dirs)
    _check(_regress(nights, "off", d1, d2), _regress(nights, "off", d1, d3))


def test_regress_and_history_from_the_store(store_url: str, nights: Nights, tmp_path: Path) -> None:
    db = str(nights.db)
    if store_url.startswith("postgresql"):   # the same nights into a real PostgreSQL
        db = store_url
        ingested = harness(["ingest", *(str(d) for d in nights.dirs)], tmp_path, db)
        assert ingested.returncode == 0, ingested.stderr
    _check(_regress(nights, db, "run=1", "run=2"), _regress(nights, db, "run=1", "run=3"))
    assert _regress(nights, db, "last=1,skip=2", "last=1").returncode == 0
    history = harness(["history", "--config", "quickstart-sim", "--point", "c4", "--out", str(tmp_path / "h")],
                      tmp_path, db)
    assert history.returncode == 0, history.stderr
    rows = [line for line in history.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert len(rows) == 3 and "changed" not in rows[0]
    assert "changed: setting args.max-running-requests: 32 -> 2" in rows[1]
    assert "changed: setting args.max-running-requests: 2 -> 32" in rows[2]
    assert (tmp_path / "h" / "history.png").is_file() and (tmp_path / "h" / "history.html").is_file()

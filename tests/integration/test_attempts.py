"""Each run of a point is an attempt: a new attempt never reads or publishes an earlier attempt's files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.point.run import EXIT_FAILED, PointOptions, run_point
from harness.point.state.attempt import ATTEMPTS_DIR

from .conftest import sim_plan

EARLIER = Path(__file__).resolve().parents[1] / "fixtures" / "results" / "sim-run" / "quickstart-sim" / "conc4"


def test_a_failed_rerun_of_a_completed_point_publishes_nothing_of_the_earlier_attempt(tmp_path: Path) -> None:
    plan = sim_plan(["--sim-startup-seconds", "600"])     # this attempt's server never becomes ready
    point = tmp_path / plan.config_key / f"conc{plan.conc}"
    shutil.copytree(EARLIER / "aiperf", point / "aiperf")   # an earlier, completed attempt: AIPerf's records,
    shutil.copy(EARLIER / "bmk_agentic_quickstart-sim_conc4.json", point / f"bmk_agentic_it-sim_conc{plan.conc}.json")
    (point / "status.json").write_text(json.dumps({"state": "completed", "attempt": "20261130T100000Z-aaaaaa"}))
    (point / "point_result.json").write_text(json.dumps({"state": "completed", "conc": plan.conc}))

    outcome = run_point(plan, PointOptions(out_dir=tmp_path, ready_timeout_s=2))

    assert outcome.state == "failed" and outcome.exit_status == EXIT_FAILED
    assert outcome.result is None and outcome.result_path is None   # no request of this attempt: no numbers
    assert not (point / "point_result.json").exists() and not list(point.glob("bmk_agentic_*.json"))
    assert not (point / "aiperf").exists()
    earlier = point / ATTEMPTS_DIR / "20261130T100000Z-aaaaaa"
    assert (earlier / "aiperf" / "profile_export.jsonl").is_file() and (earlier / "point_result.json").is_file()
    status = json.loads((point / "status.json").read_text())
    assert status["state"] == "failed" and status["reason"].startswith("ready_timeout")
    assert status["attempt"] != "20261130T100000Z-aaaaaa"


@pytest.mark.slow
def test_repeated_runs_are_attempts_each_naming_itself_and_the_spread_is_printed(tmp_path: Path) -> None:
    import subprocess
    import sys

    quickstart = Path(__file__).resolve().parents[2] / "recipes" / "quickstart-sim.yaml"
    r = subprocess.run([sys.executable, "-m", "harness", "run", str(quickstart), "--point", "c2", "--repeat", "2",
                        "--duration", "4", "--set", "client.warmup_requests_per_lane=1", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode in (0, 3), r.stdout[-3000:] + r.stderr[-3000:]
    assert "run 1 of 2" in r.stdout and "run 2 of 2" in r.stdout
    assert "spread over 2 runs" in r.stdout and "tok/s/GPU" in r.stdout, r.stdout
    (pdir,) = [p.parent for p in tmp_path.rglob("point_result.json") if ATTEMPTS_DIR not in p.parts]
    newest = json.loads((pdir / "point_result.json").read_text())
    (earlier_dir,) = (pdir / ATTEMPTS_DIR).iterdir()
    earlier = json.loads((earlier_dir / "point_result.json").read_text())
    assert earlier["attempt"] == earlier_dir.name != newest["attempt"]
    assert json.loads((pdir / "status.json").read_text())["attempt"] == newest["attempt"]
    # the newest record carries the Student-t intervals over both runs, as repeats.json beside it does
    assert newest["repeats"] == json.loads((pdir / "repeats.json").read_text())
    assert newest["repeats"]["runs"] == 2
    assert sorted(newest["repeats"]["attempts"]) == sorted([newest["attempt"], earlier["attempt"]])


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_run_and_sweep_take_over_a_point_whose_harness_was_killed(tmp_path: Path, command: str) -> None:
    """A point left `running` by a killed harness: the next run or sweep takes its lock over, records the
    earlier attempt as `failed: harness_killed` and sets it aside before its own attempt starts."""
    import os
    import signal
    import subprocess
    import sys

    from harness.cli import main as cli

    from .conftest import DATA

    out = tmp_path / "runs"
    point = out / "it-sim" / "variants" / "stale" / "conc4"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import json, os, socket, sys, time\n"
        "from pathlib import Path\n"
        "from harness.point.state.ownership import PointLock\n"
        "d = Path(sys.argv[1]); PointLock(d).acquire()\n"
        "(d / 'status.json').write_text(json.dumps({'config_key': 'it-sim', 'conc': 4, 'state': 'running',"
        " 'phase': 'profiling', 'harness_pid': os.getpid(), 'harness_host': socket.gethostname(),"
        " 'attempt': '20261130T100000Z-bbbbbb'}))\n"
        "print('locked', flush=True); time.sleep(600)\n"), str(point)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()

    args = [command, str(DATA / "sim-small.yaml"), "--out", str(out), "--tag", "stale", "--ready-timeout", "2",
            "--set", "sim_args.sim-startup-seconds=600", *(["--point", "c4"] if command == "run" else ["--no-report"])]
    assert cli(args) == EXIT_FAILED
    earlier = json.loads((point / ATTEMPTS_DIR / "20261130T100000Z-bbbbbb" / "status.json").read_text())
    assert earlier["state"] == "failed" and earlier["reason"].startswith(f"harness_killed: the harness process "
                                                                           f"{holder.pid}")
    now = json.loads((point / "status.json").read_text())
    assert now["state"] == "failed" and now["reason"].startswith("ready_timeout")

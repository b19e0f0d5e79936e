"""A ready server's SGLang processes (titled `sglang::...`, in the server's process group) are watched: one that
dies ends the point `server_crashed` naming it, as the main process's exit does. Real processes stand in for
SGLang's: `exec -a` gives them SGLang's titles."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from harness.point.servers.server_crash import CrashWatch, crash_reason, sglang_members

# a group leader (the "server") with two children titled as SGLang titles its scheduler and detokenizer, and one
# helper with another title, which is not watched
SERVER = ("(exec -a sglang::scheduler_TP0 sleep 60) & (exec -a sglang::detokenizer sleep 60) & "
          "(exec -a helper sleep 60) & wait")


def _start() -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(["bash", "-c", SERVER], start_new_session=True)
    deadline = time.monotonic() + 10
    while len(sglang_members(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc


def test_a_dead_sglang_process_is_a_crash_named_by_its_title() -> None:
    proc = _start()
    try:
        watch = CrashWatch.of_group(proc.pid)
        assert sorted(m.title for m in watch.members) == ["sglang::detokenizer", "sglang::scheduler_TP0"]
        assert crash_reason(None, watch) is None
        scheduler = next(m.pid for m in watch.members if m.title.startswith("sglang::scheduler"))
        os.kill(scheduler, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while crash_reason(None, watch) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert crash_reason(None, watch) == \
            f"server_crashed: sglang::scheduler_TP0 (pid {scheduler}) died during the run"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_the_main_process_exit_is_a_crash_with_its_status() -> None:
    assert crash_reason(1, CrashWatch([])) == "server_crashed: the server exited with status 1 during the run"
    assert crash_reason(None, CrashWatch([])) is None
    assert crash_reason(None, None) is None


def test_a_process_outside_the_group_is_not_watched() -> None:
    other = subprocess.Popen(["bash", "-c", "exec -a sglang::scheduler_TP0 sleep 60"], start_new_session=True)
    proc = _start()
    try:
        assert other.pid not in {m.pid for m in CrashWatch.of_group(proc.pid).members}
    finally:
        for p in (proc, other):
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def test_sglang_watchdog_names_the_process_when_the_server_went_down_whole(tmp_path: Path) -> None:
    # SGLang's SubprocessWatchdog line (sglang/srt/utils/watchdog.py) as its logger writes it
    log = tmp_path / "server.log"
    log.write_text("[2026-12-01 16:10:02] Some earlier line\n"
                   "[2026-12-01 16:10:03] Subprocess scheduler_0 (pid=4242) crashed with exit code -9. "
                   "Triggering SIGQUIT for cleanup...\n")
    assert crash_reason(-9, CrashWatch([]), log) == (
        "server_crashed: SGLang's scheduler_0 (pid 4242) crashed with exit code -9; "
        "the server exited with status -9 during the run")
    assert crash_reason(None, CrashWatch([]), log) is None   # the log alone ends nothing
    assert crash_reason(1, CrashWatch([]), tmp_path / "missing.log") == \
        "server_crashed: the server exited with status 1 during the run"

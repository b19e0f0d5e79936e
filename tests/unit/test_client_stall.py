"""The client watch: a client that spends no CPU time, writes no log and no record for the bound is
`client_stalled`; any of the three is progress."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from harness.point.replay.client_stall import ClientStallJudge, ClientStallWatch, GroupSample, group_sample


def test_the_judge_waits_for_the_bound_and_any_progress_restarts_it():
    judge = ClientStallJudge(60, now=0)
    busy = GroupSample(ticks=10, processes=3, stopped=0)
    judge.saw(0, 100, busy, now=0)
    judge.saw(0, 100, busy, now=59)
    assert judge.stalled_reason(59) is None
    judge.saw(0, 100, GroupSample(11, 3, 0), now=59)     # one more CPU tick
    assert judge.stalled_reason(118) is None
    judge.saw(0, 100, GroupSample(11, 3, 3), now=119.5)
    reason = judge.stalled_reason(119.5)
    assert reason == ("client_stalled: no new AIPerf record, no client log output and no CPU time in the client's "
                      "3 processes for 60 s (bound 60 s; 3 of 3 stopped (SIGSTOP); 0 AIPerf records)")


def test_without_proc_or_once_the_group_is_gone_the_judge_never_fails_the_client():
    judge = ClientStallJudge(5, now=0)
    judge.saw(3, 10, None, now=0)
    assert judge.stalled_reason(100) is None
    judge.saw(3, 10, GroupSample(0, 0, 0), now=100)
    assert judge.stalled_reason(200) is None


def test_a_stopped_process_group_is_seen_in_proc_and_judged_stalled():
    proc = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: sum(range(10000))"],
                            start_new_session=True)
    try:
        time.sleep(0.5)
        running = group_sample(proc.pid)
        assert running is not None and running.processes == 1 and running.stopped == 0
        os.killpg(proc.pid, signal.SIGSTOP)
        time.sleep(0.2)
        watch = ClientStallWatch(proc.pid, 1.0, lambda: 0, ())
        watch.poll_s = 0.0
        deadline = time.monotonic() + 30
        while watch.check() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert watch.reason is not None and watch.reason.startswith("client_stalled: "), watch.reason
        assert "1 of 1 stopped (SIGSTOP)" in watch.reason
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_an_lm_eval_waiting_on_the_server_is_not_stalled_and_its_reason_names_its_answers():
    judge = ClientStallJudge(10, now=0, what="lm-eval answer")
    idle = GroupSample(ticks=5, processes=2, stopped=0)
    judge.saw(4, 100, idle, now=0)
    judge.saw(4, 100, idle, now=9, server_busy=True)     # requests in flight: the clock restarts
    assert judge.stalled_reason(18) is None
    judge.saw(4, 100, idle, now=19)
    assert judge.stalled_reason(19) == ("client_stalled: no new lm-eval answer, no client log output and no CPU "
                                        "time in the client's 2 processes for 10 s (bound 10 s; 4 lm-eval answers)")


def test_a_directory_among_the_logs_counts_every_file_under_it(tmp_path):
    out = tmp_path / "lm_eval"
    watch = ClientStallWatch(1, 10, lambda: 0, (tmp_path / "lm_eval.log", out), sample=lambda _pgid: None)
    assert watch._log_bytes() == 0
    (out / "model").mkdir(parents=True)
    (out / "model" / "results.json").write_text("12345")
    (tmp_path / "lm_eval.log").write_text("ab")
    assert watch._log_bytes() == 7


def test_where_the_server_cannot_count_requests_in_flight_only_a_stopped_client_is_stalled():
    judge = ClientStallJudge(10, now=0, what="lm-eval answer")
    idle = GroupSample(ticks=5, processes=2, stopped=0)
    judge.saw(4, 100, idle, now=0, server_busy=None)
    judge.saw(4, 100, idle, now=30, server_busy=None)   # quiet for 30 s: maybe waiting on long answers
    assert judge.stalled_reason(30) is None
    frozen = GroupSample(ticks=5, processes=2, stopped=2)
    judge.saw(4, 100, frozen, now=31, server_busy=None)
    assert judge.stalled_reason(31) == ("client_stalled: no new lm-eval answer, no client log output and no CPU "
                                        "time in the client's 2 processes for 31 s (bound 10 s; 2 of 2 stopped "
                                        "(SIGSTOP); 4 lm-eval answers)")

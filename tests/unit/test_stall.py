"""The stall decision: progress, idleness, the bound and /health 503s, on a controlled clock."""

from harness.point.replay.stall import ServerSample, StallJudge, default_stall_timeout_s, server_sample


def busy(tokens: float, in_flight: float = 4, health: int | None = None) -> ServerSample:
    return ServerSample((tokens, 0.0, 0.0, 0.0, 0.0), in_flight, health)


def test_default_bound_is_a_tenth_of_the_window_between_60_and_300_s():
    assert default_stall_timeout_s(30) == 60
    assert default_stall_timeout_s(1800) == 180
    assert default_stall_timeout_s(7200) == 300


def test_no_progress_with_requests_in_flight_stalls_after_the_bound():
    j = StallJudge(10, now=0)
    j.saw_server(busy(100), 1)
    j.saw_server(busy(150), 5)          # progress at 5
    j.saw_server(busy(150), 14)
    assert j.stalled_reason(14.9) is None
    assert j.stalled_reason(15) == ("server_stalled: no new AIPerf record and no token progress on /metrics for 10 s "
                             "(bound 10 s) with 4 requests in flight (0 AIPerf records, "
                             "sglang:generation_tokens_total 150)")


def test_a_new_aiperf_record_is_progress():
    j = StallJudge(10, now=0)
    j.saw_server(busy(100), 1)
    j.saw_records(3, 9)
    assert j.stalled_reason(18) is None and j.stalled_reason(19) is not None


def test_an_idle_server_is_not_stalled():
    j = StallJudge(10, now=0)
    j.saw_server(busy(100, in_flight=0), 50)
    assert j.stalled_reason(55) is None
    j.saw_server(busy(100, in_flight=2), 56)    # requests arrive: the clock runs from the last idle sample
    assert j.stalled_reason(59) is None and j.stalled_reason(60) is not None


def test_without_metrics_only_health_can_tell():
    j = StallJudge(10, now=0)
    j.saw_server(ServerSample(None, None, 200), 100)
    assert j.stalled_reason(1000) is None
    j.saw_server(ServerSample(None, None, 503), 1001)
    assert j.stalled_reason(1001) is None               # one 503 is not enough
    j.saw_server(ServerSample(None, None, 503), 1003)
    assert j.stalled_reason(1003) == ("server_stalled: /health answered 503 2 times in a row, no progress for 1003 s "
                               "(0 AIPerf records, sglang:generation_tokens_total unknown)")


def test_progress_between_503s_starts_the_count_again():
    j = StallJudge(100, now=0)
    j.saw_server(busy(10, health=503), 1)
    j.saw_server(busy(20), 2)
    j.saw_server(busy(20, health=503), 3)
    assert j.stalled_reason(3) is None


def test_a_scrape_without_answer_keeps_what_was_seen_last():
    j = StallJudge(10, now=0)
    j.saw_server(busy(100), 1)
    j.saw_server(ServerSample(None, None), 5)
    assert j.stalled_reason(11) is not None


def test_server_sample_reads_the_progress_counters_and_in_flight_requests():
    counters = {"sglang:generation_tokens_total": 7.0, "sglang:num_used_tokens": 3.0,
                "sglang:num_running_reqs": 2.0, "sglang:num_queue_reqs": 1.0}
    assert server_sample(counters) == ServerSample((7.0, 0.0, 0.0, 3.0, 0.0), 3.0)
    assert server_sample({"sglang:generation_tokens_total": 7.0}).in_flight is None
    assert server_sample(None) == ServerSample(None, None) == server_sample({"other": 1.0})


def test_a_server_that_answers_nothing_stalls_even_with_nothing_in_flight():
    j = StallJudge(30, now=0)
    j.saw_server(busy(100, in_flight=0), 5)        # idle between two requests, then frozen (SIGSTOP)
    j.saw_server(ServerSample(None, None), 37)     # /metrics and /health timed out
    assert j.stalled_reason(34) is None
    assert j.stalled_reason(35) == ("server_stalled: the server answered neither /metrics nor /health for 30 s "
                             "(bound 30 s) (0 AIPerf records, sglang:generation_tokens_total 100)")


def test_an_answer_after_a_missed_look_clears_the_mute_clock():
    j = StallJudge(30, now=0)
    j.saw_server(busy(100, in_flight=0), 5)
    j.saw_server(ServerSample(None, None), 20)     # one slow look
    j.saw_server(busy(100, in_flight=0), 25)
    assert j.stalled_reason(100) is None
    j.saw_server(ServerSample(None, None, 200), 101)   # metrics gone, /health still answers
    assert j.stalled_reason(200) is None


def test_a_stale_idle_reading_does_not_keep_a_silent_server_idle():
    j = StallJudge(10, now=0)
    j.saw_server(busy(100, in_flight=0), 1)
    j.saw_server(ServerSample(None, None), 5)      # the idle reading is old: the mute clock runs from 1
    assert j.last_progress == 1 and j.stalled_reason(11) is not None

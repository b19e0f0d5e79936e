"""The AIPerf command line and the parsing of what AIPerf leaves behind."""

from pathlib import Path

from harness.point.replay.aiperf import build_argv, build_env, phase_counts, read_records
from harness.recipe.client_plan import ClientPlan


def client(**over):
    base = dict(served_model_name="muse", scenario="agentx", traces="/traces", conc=8, duration_s=1800,
                grace_s=120, warmup_s=0, seed=42, tokenizer=None, max_sessions=None)
    base.update(over)
    return ClientPlan(**base)


def test_agentx_argv_is_inferencex_standalone_command_with_the_points_window():
    """InferenceX's standalone AgentX command (`--scenario agentx --url --endpoint --model --tokenizer --concurrency
    DATASET --output-artifact-dir`), plus the point's window and grace; the preset sets everything else."""
    argv = build_argv(client(), "http://h:30000", Path("/out/aiperf"), "local/tok", executable="aiperf")
    assert argv == ["aiperf", "profile", "--scenario", "agentx", "--url", "http://h:30000",
                    "--endpoint", "/v1/chat/completions", "--model", "muse", "--tokenizer", "local/tok",
                    "--concurrency", "8", "--custom-dataset-type", "weka_trace", "--input-file", "/traces",
                    "--benchmark-duration", "1800", "--benchmark-grace-period", "120", "--allow-dataset-wrap",
                    "--server-metrics", "http://h:30000/metrics", "--ui", "none",
                    "--output-artifact-dir", "/out/aiperf"]
    seeded = build_argv(client(seed=7), "u", Path("a"), "t", "aiperf")
    assert "--random-seed 7" in " ".join(seeded)   # only a seed other than the preset's 42 is passed


def test_mvp_argv_passes_what_inferencex_passed_before_the_preset():
    argv = build_argv(client(scenario="inferencex-agentx-mvp", seed=7), "http://h:30000", Path("/out/aiperf"),
                      "local/tok", executable="aiperf")
    joined = " ".join(argv)
    assert argv[:2] == ["aiperf", "profile"]
    for part in ["--scenario inferencex-agentx-mvp", "--custom-dataset-type weka_trace", "--input-file /traces",
                 "--concurrency 8", "--benchmark-duration 1800", "--benchmark-grace-period 120",
                 "--trajectory-start-min-ratio 0.25", "--trajectory-start-max-ratio 0.75",
                 "--use-server-token-count", "--extra-inputs ignore_eos:true", "--streaming", "--ui none",
                 "--tokenizer local/tok", "--model muse", "--url http://h:30000", "--random-seed 7",
                 "--endpoint-type chat", "--no-gpu-telemetry", "--output-artifact-dir /out/aiperf"]:
        assert part in joined, part
    assert "--unsafe-override" not in argv
    assert "--request-rate" not in argv  # would conflict with the scenario's agentic-replay lock


def test_a_deployments_workers_are_scraped_beside_the_router():
    """InferenceX's multi-node AgentX runs pass every worker's /metrics (AIPERF_SERVER_METRICS_URLS): the router's
    page holds no engine metric."""
    argv = build_argv(client(), "http://r:8000/", Path("a"), "t", "aiperf",
                      worker_urls=["http://p:8100", "http://d:8200/"])
    i = argv.index("--server-metrics")
    assert argv[i + 1:i + 5] == ["http://r:8000/metrics", "http://p:8100/metrics", "http://d:8200/metrics",
                                 "--ui"]
    one = build_argv(client(), "http://h:30000", Path("a"), "t", "aiperf")
    assert one[one.index("--server-metrics") + 1:][:2] == ["http://h:30000/metrics", "--ui"]


def test_only_a_run_marked_unofficial_gets_the_override():
    short = build_argv(client(duration_s=30.5), "u", Path("a"), "t", "aiperf")
    assert "--unsafe-override" not in short   # never chosen by the harness: plan time refuses such a run instead
    argv = build_argv(client(duration_s=30.5, warmup_s=20, max_sessions=50, unofficial=True), "u", Path("a"), "t",
                      "aiperf")
    assert argv[-1] == "--unsafe-override"
    assert "--benchmark-duration 30.5" in " ".join(argv)
    assert "--agentic-cache-warmup-duration 20" in " ".join(argv)
    assert "--num-sessions 50" in " ".join(argv)


def test_the_pinned_corpus_goes_by_its_aiperf_name():
    pinned = "public-dataset:semianalysis_cc_traces_weka_062126@23f152f6f0f9399a85901b89a6458def0ef16729"
    argv = build_argv(client(traces=pinned), "u", Path("a"), "t", "aiperf")
    assert "--public-dataset semianalysis_cc_traces_weka_062126" in " ".join(argv)
    assert "--input-file" not in argv and "--custom-dataset-type" not in argv
    repo = "hf-weka-dataset:semianalysisai/cc-traces-weka-062126@23f152f6f0f9399a85901b89a6458def0ef16729"
    assert "--hf-weka-dataset semianalysisai/cc-traces-weka-062126" in " ".join(
        build_argv(client(traces=repo), "u", Path("a"), "t", "aiperf"))


def test_env_keeps_caches_under_the_cache_dir_and_is_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "user"))
    env = build_env(tmp_path / "run", tmp_path / "hf", tmp_path / "t")
    assert env["HF_HUB_OFFLINE"] == "1" and env["HF_HOME"] == str(tmp_path / "hf")
    assert env["MPLCONFIGDIR"].startswith(str(tmp_path / "run"))
    # the dataset cache, keyed by content and settings, is shared by every run of the user (as AIPerf's own is)
    assert env["AIPERF_DATASET_MMAP_CACHE_DIR"] == str(tmp_path / "user" / "aiperf-dataset-mmap")
    (tmp_path / "blocked").write_text("")                       # a file where the cache directory should be
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "blocked"))
    env = build_env(tmp_path / "run", tmp_path / "hf", tmp_path / "t")
    assert env["AIPERF_DATASET_MMAP_CACHE_DIR"] == str(tmp_path / "run" / "dataset_mmap")
    assert "HF_DATASETS_CACHE" not in env
    assert env["PYTHONFAULTHANDLER"] == "1"
    assert "AIPERF_HTTP_TCP_USER_TIMEOUT" not in env   # the agentx preset sets its own timeouts
    mvp = build_env(tmp_path, tmp_path / "hf", tmp_path / "t", scenario="inferencex-agentx-mvp")
    assert mvp["AIPERF_HTTP_TCP_USER_TIMEOUT"] == "900000" and mvp["AIPERF_DATASET_CONFIGURATION_TIMEOUT"] == "1800"
    assert build_env(tmp_path, tmp_path / "hf", tmp_path / "t", "/staged")["HF_DATASETS_CACHE"] == "/staged"


LOG = """\
2026-11-29 13:54:28.821 - PhaseRunner - NOTICE - Phase agentic.warmup (warmup) complete | completed=2, cancelled=0, errors=0 | elapsed=5.29s
2026-11-29 13:54:45.001 - PhaseRunner - NOTICE - Phase profiling (profiling) complete | completed=1,203, cancelled=17, errors=3 | sessions: completed=4, cancelled=8 | elapsed=30.2s
"""


def test_phase_counts_reads_the_profiling_line():
    assert phase_counts(LOG) == {"completed": 1203, "cancelled": 17, "errors": 3}
    assert phase_counts(LOG, "warmup") == {"completed": 2, "cancelled": 0, "errors": 0}
    assert phase_counts("nothing here") is None


def test_read_records_skips_a_truncated_last_line(tmp_path):
    (tmp_path / "profile_export.jsonl").write_text('{"metadata": {}}\n{"metadata": {}}\n{"metad')
    assert len(read_records(tmp_path)) == 2


def test_record_counter_reads_only_complete_new_lines(tmp_path):
    from harness.point.replay.aiperf import RecordCounter

    counter = RecordCounter(tmp_path)
    assert counter.update() == 0                      # no file yet
    path = tmp_path / "profile_export.jsonl"
    path.write_text('{"metadata":{}}\n{"metadata":{},"error":{"code":500}}\n{"meta')
    assert counter.update() == 2 and counter.errors == 1
    with open(path, "a") as fh:
        fh.write('data":{}}\n')
    assert counter.update() == 3 and counter.errors == 1


def test_phase_watcher_follows_aiperf_phase_starts(tmp_path):
    from harness.point.replay.aiperf import PhaseWatcher

    watcher = PhaseWatcher(tmp_path)
    assert watcher.update() is None
    (tmp_path / "logs").mkdir()
    log = tmp_path / "logs" / "aiperf.log"
    log.write_text("x - PhaseRunner - NOTICE - Phase agentic.warmup (warmup) started | target: 5 requests\n")
    assert watcher.update() == "warmup"
    with open(log, "a") as fh:
        fh.write("x - PhaseRunner - NOTICE - Phase profiling (profiling) started | phase_index=0\n")
    assert watcher.update() == "profiling"


def test_last_error_gives_the_last_error_line(tmp_path):
    from harness.point.replay.aiperf import last_error

    log = tmp_path / "client.log"
    assert last_error(log) == "no client log"
    log.write_text("12:00:00.001 INFO     fine\n12:00:01.000 ERROR    first\n12:00:02.000 ERROR    No profile results\n")
    assert last_error(log) == "No profile results"


FIVE_XX = Path(__file__).parents[1] / "fixtures" / "aiperf-5xx-warmup"


def test_failure_reason_names_the_servers_errors_when_aiperf_gives_up_in_warmup():
    from harness.point.replay.aiperf import failure_reason

    assert failure_reason(1, FIVE_XX / "aiperf", FIVE_XX / "client.log") == (
        "server_errors: 1 of 2 requests failed, in warmup (HTTP 500: 1; first: 'injected server error "
        "(--sim-error-rate)'); AIPerf stopped early (Terminal warmup failure for trace synth-s0-0001) and exited 1 "
        "without a summary: No profile results to export (system_controller.py:2350)")


def test_a_client_killed_by_a_signal_is_named_with_the_signal_and_its_last_words(tmp_path):
    from harness.point.replay.aiperf import failure_reason

    log = tmp_path / "client.log"
    log.write_text("aiperf 1.0.12\nloading plugins\nAll results received, initiating shutdown\n")
    assert failure_reason(-11, tmp_path, log) == (
        "client_failed: AIPerf was killed by SIGSEGV (exit -11) without a summary: no ERROR line in the client "
        "log; its last lines: aiperf 1.0.12 | loading plugins | All results received, initiating shutdown")
    # faulthandler's report (the harness runs AIPerf with PYTHONFAULTHANDLER=1): the crash and where it happened
    log.write_text("All results received, initiating shutdown\nFatal Python error: Segmentation fault\n\n"
                   "Thread 0x00007f01 (most recent call first):\n"
                   '  File "/v/zmq/sugar/context.py", line 142 in term\n'
                   '  File "/v/aiperf/controller/system_controller.py", line 900 in stop\n')
    assert failure_reason(-11, tmp_path, log) == (
        "client_failed: AIPerf was killed by SIGSEGV (exit -11) without a summary: Fatal Python error: "
        'Segmentation fault; innermost frame: File "/v/zmq/sugar/context.py", line 142 in term')
    log.write_text("")
    assert failure_reason(139, tmp_path, log) == (
        "client_failed: AIPerf was killed by SIGSEGV (exit 139) without a summary: the client log is empty")


def test_failure_reason_without_failed_records_is_client_failed(tmp_path):
    from harness.point.replay.aiperf import failure_reason

    assert failure_reason(1, tmp_path, FIVE_XX / "client.log").startswith(
        "client_failed: AIPerf stopped early (Terminal warmup failure for trace synth-s0-0001) and exited 1")
    assert failure_reason(None, tmp_path, tmp_path / "none.log") == \
        "client_failed: AIPerf exited None without a summary: no client log"


def test_failure_reason_prefers_the_clients_abort_explanation_to_its_teardown_errors(tmp_path):
    from harness.point.replay.aiperf import failure_reason

    log = tmp_path / "aiperf.log"
    log.write_text(
        "19:51:30.743 WARNING  Terminal warmup failure for trace synth-s0-0003; aborting run early (broadcasting "
        "ProfileCancelCommand).\n"
        "19:51:30.744 WARNING  Run aborted (warmup_failure): A root AgentX warmup request failed, so profiling was "
        "not started. Check the preceding request error and inference server logs. Will exit non-zero.\n"
        "19:51:30.759 ERROR    Tried to flush buffer, but file handle is not open: /x.jsonl\n")
    assert failure_reason(1, tmp_path, log) == (
        "client_failed: AIPerf stopped early (Terminal warmup failure for trace synth-s0-0003) and exited 1 without a "
        "summary: A root AgentX warmup request failed, so profiling was not started (warmup_failure)")


def test_a_warmup_budget_per_lane_is_passed_only_when_the_recipe_sets_one():
    assert "--warmup-requests-per-lane" not in build_argv(client(), "u", Path("a"), "t", "aiperf")
    argv = build_argv(client(warmup_requests_per_lane=3), "u", Path("a"), "t", "aiperf")
    assert argv[argv.index("--warmup-requests-per-lane") + 1] == "3"
    assert "--agentic-cache-warmup-duration" not in argv


def test_burst_starts_are_passed_only_when_the_recipe_asks() -> None:
    assert "--burst-phase-starts" not in build_argv(client(), "u", Path("a"), "t", "aiperf")
    assert "--burst-phase-starts" in build_argv(client(burst_phase_starts=True), "u", Path("a"), "t", "aiperf")

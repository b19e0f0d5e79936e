"""The point runner: one `PointPlan` in, one point directory out.

Takes a plan from `harness.recipe` and runs it on a fresh server: launch (through `launchers`), readiness,
worker fingerprint, power sampling, the AIPerf replay, teardown of every process group. Gives the point's
directory: `bmk_agentic_*.json` with its validity verdict, `status.json`, commands, logs and the
client's raw output.

    run             orchestration, phase by phase          status          status.json and harness.log
    readiness       alive + /health + a one-token chat      fingerprint     what actually ran
    aiperf          the client's argv, process and output   corpus_input    the corpus as AIPerf reads it
    watch           stop signals and client progress        process_group   SIGTERM → grace → SIGKILL
    result          artifacts → the result file              result_fields   pure result building
    validity        the pure verdict                        server_metrics  /metrics and accept length
    fingerprint_capture  srt-slurm's probes, run by the server's interpreter in the server's environment
    fingerprint_diff     `harness fingerprint diff`
"""

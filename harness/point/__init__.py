"""The point runner: one `PointPlan` in, one point directory out.

Takes a plan from `harness.recipe` and runs it on a fresh server: launch (through `launchers`), readiness,
worker fingerprint, power sampling, the AIPerf replay, teardown of every process group. Gives the point's
directory: `point_result.json` (the record with its validity verdict), `bmk_agentic_*.json` (the published
InferenceX row), `status.json`, commands, logs, power and the client's raw output.

    run             orchestration, phase by phase          serve           port, launch, readiness, fingerprint
    readiness       alive + /health + a one-token chat      port_owner      is the answering process ours?
    aiperf          the client's argv, process and output   corpus_input    the corpus as AIPerf reads it
    watch           stop signals and client progress        progress        loading and window progress lines
    stall           a server that stopped producing         disk_full       ENOSPC/EDQUOT and the status reserve
    process_group   SIGTERM → grace → SIGKILL               status          status.json and harness.log
    result          artifacts → the result files            result_fields   pure record building
    validity        the pure verdict                        accept_length   expected accept length, pure
    server_metrics  /metrics deltas                         variant         where a run with overrides lands
    inferencex_row  the published InferenceX row            inferencex_server_metrics  the row's server_metrics
    fingerprint     what actually ran                       fingerprint_capture  srt-slurm's probes, in the server's env
    fingerprint_diff     `harness fingerprint diff`
    server_crash    a ready server's crash (SGLang's processes)   server_auth  the server's API key, sent by the harness
"""

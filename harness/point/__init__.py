"""The point runner: one `PointPlan` in, one point directory out.

Takes a plan from `harness.recipe` and runs it on a fresh server. The point's data flows through these
stages, one package each:

    servers        launch (through `launchers`) and ready: a single-node server or a multi-node deployment,
                   its process groups, readiness, API key, crash and /metrics
    fingerprints   what actually ran on each worker, captured in the server's own environment
    replay         the AIPerf client over the trace corpus: its argv, process, output and progress
    record         the point's record with its validity verdict, and the published InferenceX row
    state          the point's state on disk beside every stage: status.json, its lock, attempts, the
                   disk-full reserve, where a variant lands, stop signals

On top, `run` orchestrates the stages for one point (with power sampling and teardown of every process
group), `sequence` runs several points on one deployment, and `sweep_plan` is the planned sweep a Slurm
task reads. A point's directory holds `point_result.json` (the record with its validity verdict),
`bmk_agentic_*.json` (the published InferenceX row), `status.json`, commands, logs, power and the client's
raw output.
"""

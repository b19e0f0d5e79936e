"""An SGLang-compatible serving simulator.

It takes the same command line and `SGLANG_SIMULATE_ACC_*` environment as
`python3 -m sglang.launch_server`, serves the same HTTP surface (OpenAI chat completions,
health/readiness, server info, Prometheus metrics), and runs a step-level continuous-batching
engine with a radix prefix cache, a DRAM (HiCache) tier and speculative acceptance on a
documented timing model. It knows the truth about every request and can write it to a log.

A request flows through two packages: `frontend` (the command line, flag table, HTTP server, auth and
metrics) hands it to `batching` (the step engine, KV cache, timing profiles, speculative acceptance,
prefill/decode roles and multi-node groups), which streams its tokens back.

Entry points: `python -m harness.sim <sglang args>` and `harness sim <sglang args>`.
"""

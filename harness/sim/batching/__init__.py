"""The simulator's engine: step-level continuous batching behind the HTTP surface.

A request (`request`, `prompt`) enters the `engine`, which schedules it against the KV cache
(`kvcache`), times each step from a hardware profile (`timing`, profiles under `profiles/`) and
speculative decoding (`spec`); `dprank`, `disagg`, `pdroles`, `bootstrap` and `multinode` model data
parallelism, prefill/decode disaggregation and multi-node deployments; `truth` and `eval_answers` give the
answers it returns; `schedlog` prints SGLang's `Prefill batch` / `Decode batch` lines from its state.
"""

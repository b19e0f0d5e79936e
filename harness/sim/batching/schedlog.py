"""The scheduler's periodic log lines, as SGLang prints them: `Prefill batch, ...` and `Decode batch, ...`.

Formats as SGLang 0.5.20 and 0.5.23 build them (identical in both, read from the releases' wheels;
`sglang/srt/managers/scheduler_components/metrics_reporter.py`, `report_prefill_stats` / `report_decode_stats`,
the token parts from `pool_stats_observer.py` `get_prefill_usage_msg_parts` / `get_decode_usage_msg_parts` for a
plain, non-hybrid pool), each behind the scheduler's logging prefix `[%(asctime)s{prefix}] ` with datefmt
`%Y-%m-%d %H:%M:%S` (`utils/common.py` `configure_logger`; the prefix ` DPn PPn TPn EPn` from `scheduler.py`, each
part only where that parallelism is on):

    [2026-01-05 10:00:00 TP0] Prefill batch, #new-seq: 2, #new-token: 8192, #cached-token: 1024,
        token usage: 0.12, #running-req: 5, #queue-req: 3, #pending-token: 20480, cuda graph: False,
        input throughput (token/s): 81920.00
    [2026-01-05 10:00:01 TP0] Decode batch, #running-req: 7, #token: 40960, token usage: 0.31, accept len: 2.71,
        accept rate: 0.57, cuda graph: True, gen throughput (token/s): 1234.56, #queue-req: 3

(each one line). `accept len` / `accept rate` only with speculative decoding. When SGLang prints them:

- a prefill line for every prefill batch (`#running-req` is the decode batch it was scheduled beside,
  `#new-token` / `#cached-token` the batch's computed and prefix-matched tokens, a chunked request's earlier chunks
  counting as cached, as SGLang's `PrefillAdder` counts them; `#pending-token` the waiting requests' tokens plus the
  chunked request's rest; `#pending-token`, `#queue-req` and `token usage` read when the line is printed, after
  the step, where SGLang takes `#pending-token` when it schedules the batch);
- a decode line when the decode-batch counter reaches a multiple of `--decode-log-interval` (default 40), with that
  batch's size, the pool's use (`#token` = pool size - free - evictable prefix cache, `token usage` its share),
  the generation throughput over the interval (decode tokens since the last decode line over the wall time since
  it, `time.perf_counter`), and the mean accept length over the interval's (request, verify step) pairs.

The stamp is UTC (SGLang's `asctime` is the server's local time, UTC in its containers). What the simulator does
not model is not printed (the disaggregation and hybrid-pool parts, `cap len`, MFU estimates); prefill batches
never run as CUDA graphs here (`cuda graph: False`), a decode batch does when it is at most the layout's
`cuda_graph_max_bs`. With DP attention the simulator's one engine stands for every rank, so it prints one line for
all of them under rank 0's prefix, with the ranks' totals. Formatting runs only when a line is due; between lines a
decode step only adds to three counters.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any

from harness.sim.batching.kvcache import KVCache
from harness.sim.batching.request import SimRequest
from harness.sim.batching.spec import SpecConfig

# SGLang's `--log-level` names (Python's logging levels); the simulator prints at info and debug only
_LEVELS = {"critical": 50, "fatal": 50, "error": 40, "warning": 30, "warn": 30, "info": 20, "debug": 10, "notset": 0}
INFO = 20
DEBUG = 10


def log_level(args: argparse.Namespace | dict[str, Any]) -> int:
    """The numeric level of `--log-level` (SGLang's default `info`; an unknown name counts as info)."""
    raw = args.get("log_level") if isinstance(args, dict) else getattr(args, "log_level", None)
    return _LEVELS.get(str(raw or "info").lower(), INFO)


def scheduler_prefix(args: argparse.Namespace | dict[str, Any]) -> str:
    """Rank 0's scheduler log prefix (` DP0 PP0 TP0 EP0`, each part only where that parallelism is on)."""
    get = args.get if isinstance(args, dict) else (lambda k, d=None: getattr(args, k, d))
    prefix = ""
    if get("enable_dp_attention", False) or int(get("attn_dp_size", 1) or 1) > 1:
        prefix += " DP0"
    for tag, key in (("PP", "pp_size"), ("TP", "tp_size"), ("EP", "ep_size")):
        if int(get(key, 1) or 1) > 1:
            prefix += f" {tag}0"
    return prefix


def log_stamp(time_s: float) -> str:
    """`%Y-%m-%d %H:%M:%S` of a wall-clock time, UTC."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(time_s))


def prefill_line(stamp: str, prefix: str, new_seq: int, new_token: int, cached_token: int, token_usage: float,
                 running_req: int, queue_req: int, pending_token: int, cuda_graph: bool,
                 input_throughput: float) -> str:
    return (f"[{stamp}{prefix}] Prefill batch, #new-seq: {new_seq}, #new-token: {new_token}, "
            f"#cached-token: {cached_token}, token usage: {token_usage:.2f}, #running-req: {running_req}, "
            f"#queue-req: {queue_req}, #pending-token: {pending_token}, cuda graph: {cuda_graph}, "
            f"input throughput (token/s): {input_throughput:.2f}")


def decode_line(stamp: str, prefix: str, running_req: int, num_token: int, token_usage: float,
                accept: tuple[float, float] | None, cuda_graph: bool, gen_throughput: float, queue_req: int) -> str:
    spec = f"accept len: {accept[0]:.2f}, accept rate: {accept[1]:.2f}, " if accept is not None else ""
    return (f"[{stamp}{prefix}] Decode batch, #running-req: {running_req}, #token: {num_token}, "
            f"token usage: {token_usage:.2f}, {spec}cuda graph: {cuda_graph}, "
            f"gen throughput (token/s): {gen_throughput:.2f}, #queue-req: {queue_req}")


def used_tokens(kv: KVCache) -> int:
    """SGLang's `num_used`: the pool less its free and evictable (prefix cache only) tokens."""
    return kv.used - kv.evictable_tokens()


def _print(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class SchedulerLog:
    """One scheduler's batch lines: the interval counters and the printing (the engine calls `prefill` after each
    prefill step, `decode_step` after each decode step and `decode` when that says a line is due).

    `spec` gives the accept line's parts (none without speculative decoding) and the accept rate's drafts per
    verify step: `--speculative-num-draft-tokens` - 1, else `--speculative-num-steps`, as SGLang divides.
    """

    def __init__(self, prefix: str, decode_log_interval: int, spec: SpecConfig,
                 write: Callable[[str], None] = _print, clock: Callable[[], float] = time.perf_counter,
                 wall: Callable[[], float] = time.time):
        self.prefix = prefix
        self.interval = max(1, decode_log_interval)
        self.drafts_per_round: int | None = None
        if spec.enabled:
            self.drafts_per_round = spec.num_draft_tokens - 1 if spec.num_draft_tokens else spec.num_steps
        self.write = write
        self.clock = clock
        self.wall = wall
        self.decode_batches = 0
        self.gen_tokens = 0          # decode tokens since the last decode line
        self.accept_tokens = 0       # accepted tokens (bonus included) over the interval's verify pairs
        self.verify_pairs = 0        # (request, verify step) pairs since the last decode line
        now = clock()
        self.last_decode = now
        self.last_prefill = now

    def prefill(self, work: Sequence[tuple[SimRequest, int, int]], running_req: int,
                waiting: Collection[SimRequest], chunk_rest: int, kv: KVCache) -> None:
        """Print the line of a prefill batch that just ran: `work` is its (request, tokens already in KV, tokens
        computed) triples, `running_req` the decode batch it was scheduled beside, `chunk_rest` what the chunked
        request still has to compute."""
        now = self.clock()
        gap = now - self.last_prefill
        self.last_prefill = now
        new_token = sum(n for _, _, n in work)
        pending = chunk_rest + sum(r.prompt_tokens + r.output for r in waiting)
        used = used_tokens(kv)
        self.write(prefill_line(log_stamp(self.wall()), self.prefix, len(work), new_token,
                                sum(c for _, c, _ in work), used / max(1, kv.capacity), running_req, len(waiting),
                                pending, False, new_token / gap if gap > 0 else 0.0))

    def decode_step(self, batch: int, produced: int, accept_len: int) -> bool:
        """Count one decode batch (`batch` requests that each verified `accept_len` tokens under speculative
        decoding); True when its line is due (then call `decode`)."""
        self.decode_batches += 1
        self.gen_tokens += produced
        if self.drafts_per_round is not None:
            self.accept_tokens += accept_len * batch
            self.verify_pairs += batch
        return self.decode_batches % self.interval == 0

    def decode(self, running_req: int, kv: KVCache, cuda_graph: bool, queue_req: int) -> None:
        """Print the decode line that `decode_step` said is due."""
        now = self.clock()
        gap = now - self.last_decode
        self.last_decode = now
        throughput = self.gen_tokens / gap if gap > 0 else 0.0
        self.gen_tokens = 0
        accept = None
        if self.drafts_per_round is not None:
            length = self.accept_tokens / self.verify_pairs if self.verify_pairs else 0.0
            drafts = self.verify_pairs * self.drafts_per_round
            rate = (self.accept_tokens - self.verify_pairs) / drafts if drafts > 0 else 0.0
            accept = (length, rate)
            self.accept_tokens = self.verify_pairs = 0
        used = used_tokens(kv)
        self.write(decode_line(log_stamp(self.wall()), self.prefix, running_req, used, used / max(1, kv.capacity),
                               accept, cuda_graph, throughput, queue_req))

"""SGLang's periodic scheduler lines, `Prefill batch, ...` and `Decode batch, ...`, read from a server log (a real
SGLang server's or the simulator's, which prints the same lines: `harness.sim.batching.schedlog`).

The format, as SGLang 0.5.20 and 0.5.23 build it (identical in both, read from the releases' wheels:
`python/sglang/srt/managers/scheduler_components/metrics_reporter.py`, `report_prefill_stats` /
`report_decode_stats`, the pool parts from `pool_stats_observer.py`; earlier releases built the same lines in
`managers/scheduler_metrics_mixin.py`, `log_prefill_stats` / `log_decode_stats`), behind the logging prefix
`[%(asctime)s{prefix}] ` with datefmt `%Y-%m-%d %H:%M:%S` (`utils/common.py` `configure_logger`; `SGLANG_LOG_MS`
adds `.mmm`; the scheduler's prefix is ` DPn PPn ATTN_CPn MOE_DPn TPn EPn`, each part only where that parallelism
is on). A real log's lines (quoted in sgl-project/sgl-kernel-npu#608, an NPU server; on GPUs `cuda graph`), each
one line:

    [2026-07-21 15:00:13 TP0 EP0] Prefill batch, #new-seq: 8, #new-token: 54400, #cached-token: 482304,
        token usage: 0.66, #running-req: 16, #queue-req: 2, #pending-token: 0, npu graph: False,
        input throughput (token/s): 2793.64
    [2026-07-21 15:00:13 TP0 EP0] Decode batch, #running-req: 24, #token: 233600, token usage: 0.66,
        accept len: 3.05, accept rate: 0.68, npu graph: True, gen throughput (token/s): 239.06, #queue-req: 2

SGLang prints a prefill line per prefill batch and a decode line every `--decode-log-interval` (default 40)
decode batches, on every attention-TP rank 0 (one per DP-attention rank). Read tolerantly: fields are
`name: value` pairs split on commas, in any order, so fields a release adds or drops (`#pending-token`, the
disaggregation queues, `cap len`, MFU estimates, `npu graph`) are skipped or absent; older releases'
`Prefill batch.` / trailing `, ` and the `[forward_ct]` of `SGLANG_LOG_FORWARD_ITERS` parse too; a hybrid pool's
line has `full token usage` / `swa token usage` (`#full token` / `#swa token`) instead of `token usage`
(`#token`), read as their max as SGLang's `token_usage` metric does; anything before the `[` (a Ray actor's
`(pid=...)`) is skipped, and so is every line that is not a batch line. The stamp is read as UTC: SGLang writes
the server's local time, UTC in its containers (the simulator writes UTC).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from typing import Literal

_LINE = re.compile(
    r"\[(?P<stamp>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:[.,](?P<ms>\d{1,6}))?(?P<prefix>(?: [A-Z_]+\d+)*)\]\s+"
    r"(?P<kind>Prefill|Decode) batch(?: \[\d+\])?[.,]\s*(?P<fields>.*)$")
_RANK = re.compile(r"\bDP(\d+)\b")


@dataclass(frozen=True)
class BatchLogLine:
    """One scheduler batch line. Counts are None where the line has no such field."""

    kind: Literal["prefill", "decode"]
    time_ns: int                    # wall clock (UTC) of the line's stamp, ns (second resolution unless .mmm)
    running_req: int | None         # `#running-req`: the decode batch (beside which a prefill batch ran)
    queue_req: int | None           # `#queue-req`: waiting requests
    token_usage: float | None       # share of the KV pool in use, 0..1 (2 decimals as printed)
    new_seq: int | None = None      # prefill: requests in the batch (`#new-seq`)
    new_token: int | None = None    # prefill: tokens computed (`#new-token`)
    cached_token: int | None = None  # prefill: tokens already in the KV cache (`#cached-token`)
    num_token: int | None = None    # decode: KV pool tokens in use (`#token`)
    gen_throughput: float | None = None  # decode: tokens/s over the last interval
    accept_len: float | None = None  # decode, speculative: mean accept length over the last interval
    dp_rank: int | None = None      # the `DPn` of the prefix (DP attention), else None


def _int(fields: dict[str, str], *names: str) -> int | None:
    values = [int(fields[n]) for n in names if n in fields and fields[n].isdigit()]
    return max(values) if values else None


def _float(fields: dict[str, str], *names: str) -> float | None:
    values: list[float] = []
    for name in names:
        try:
            values.append(float(fields[name]))
        except (KeyError, ValueError):
            continue
    return max(values) if values else None


def _fields(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in text.split(","):
        name, colon, value = part.partition(":")
        if colon:
            out[name.strip()] = value.strip()
    return out


def _time_ns(stamp: str, ms: str | None) -> int:
    seconds = calendar.timegm((int(stamp[0:4]), int(stamp[5:7]), int(stamp[8:10]),
                               int(stamp[11:13]), int(stamp[14:16]), int(stamp[17:19]), 0, 0, 0))
    frac = int(ms.ljust(9, "0")[:9]) if ms else 0
    return seconds * 1_000_000_000 + frac


def parse_line(line: str) -> BatchLogLine | None:
    """The batch line `line` holds, or None."""
    if " batch" not in line:
        return None
    m = _LINE.search(line)
    if m is None:
        return None
    f = _fields(m.group("fields"))
    rank = _RANK.search(m.group("prefix"))
    time_ns = _time_ns(m.group("stamp"), m.group("ms"))
    running, queued = _int(f, "#running-req"), _int(f, "#queue-req")
    usage = _float(f, "token usage") if "token usage" in f else _float(f, "full token usage", "swa token usage")
    dp_rank = int(rank.group(1)) if rank else None
    if m.group("kind") == "Prefill":
        return BatchLogLine("prefill", time_ns, running, queued, usage, new_seq=_int(f, "#new-seq"),
                            new_token=_int(f, "#new-token"), cached_token=_int(f, "#cached-token"), dp_rank=dp_rank)
    tokens = _int(f, "#token") if "#token" in f else _int(f, "#full token", "#swa token")
    return BatchLogLine("decode", time_ns, running, queued, usage, cached_token=_int(f, "#cached-token"),
                        num_token=tokens, gen_throughput=_float(f, "gen throughput (token/s)"),
                        accept_len=_float(f, "accept len"), dp_rank=dp_rank)


def parse_batch_log(text: str) -> list[BatchLogLine]:
    """Every batch line of a server log's text, in order; other lines are skipped."""
    out = []
    for line in text.splitlines():
        parsed = parse_line(line)
        if parsed is not None:
            out.append(parsed)
    return out

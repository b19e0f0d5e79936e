"""SGLang's scheduler batch lines read back (`harness.inspect.batch_log`): real SGLang lines of several releases, and
the simulator's own lines (`harness.sim.batching.schedlog`) parse back to the values they were printed from."""

from __future__ import annotations

import calendar

import pytest

from harness.inspect.batch_log import BatchLogLine, parse_batch_log, parse_line
from harness.sim.batching.schedlog import decode_line, prefill_line
from harness.sim.batching.topology.dprank import routed_line


def _ns(stamp: str) -> int:
    day, clock = stamp.split(" ")
    y, mo, d = (int(x) for x in day.split("-"))
    h, mi, s = (int(x) for x in clock.split(":"))
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) * 1_000_000_000


# Lines as real SGLang servers printed them (quoted in sgl-project issues and pull requests).
# 0.5.20/0.5.23 shape, speculative, TP/EP prefix, on NPU (sgl-project/sgl-kernel-npu#608)
REAL_SPEC = (
    "[2026-07-21 15:00:13 TP0 EP0] Prefill batch, #new-seq: 8, #new-token: 54400, #cached-token: 482304, "
    "token usage: 0.66, #running-req: 16, #queue-req: 2, #pending-token: 0, npu graph: False, "
    "input throughput (token/s): 2793.64\n"
    "[2026-07-21 15:00:13 TP0 EP0] Decode batch, #running-req: 24, #token: 233600, token usage: 0.66, "
    "accept len: 3.05, accept rate: 0.68, npu graph: True, gen throughput (token/s): 239.06, #queue-req: 2\n"
    '[2026-07-21 15:00:15] INFO:     127.0.0.1:43514 - "POST /generate HTTP/1.1" 200 OK\n'
)
# no speculative decoding, no prefix, `cuda graph` (sgl-project/sglang#22166)
REAL_PLAIN = (
    "[2026-04-05 20:02:51] Decode batch, #running-req: 32, #token: 11179, token usage: 0.08, cuda graph: True, "
    "gen throughput (token/s): 1635.11, #queue-req: 0\n"
    "[2026-04-05 20:02:51] Prefill batch, #new-seq: 1, #new-token: 158, #cached-token: 0, token usage: 0.08, "
    "#running-req: 31, #queue-req: 0, cuda graph: True, input throughput (token/s): 559.53\n"
)
# an earlier release: every line ends with ", " (sgl-project/sglang#13023)
REAL_TRAILING = (
    "[2025-11-11 04:06:27] Decode batch, #running-req: 46, #token: 34901, token usage: 0.19, cuda graph: False, "
    "gen throughput (token/s): 1447.08, #queue-req: 0, \n"
    "[2025-11-11 04:28:01] Prefill batch, #new-seq: 10, #new-token: 4096, #cached-token: 10, token usage: 0.00, "
    "#running-req: 4, #queue-req: 186, \n"
)
# a hybrid (SWA) pool: full and SWA usage instead of one `token usage` (eugr/llama-benchy#15)
REAL_HYBRID = (
    "[2026-05-15 12:50:14] Prefill batch, #new-seq: 1, #new-token: 2048, #cached-token: 0, full token usage: 0.01, "
    "swa token usage: 0.02, #running-req: 0, #queue-req: 0, input throughput (token/s): 46.36, cuda graph: False\n"
)


def test_real_0_5_23_lines_with_speculative_decoding_and_a_tp_ep_prefix() -> None:
    prefill, decode = parse_batch_log(REAL_SPEC)
    t = _ns("2026-07-21 15:00:13")
    assert prefill == BatchLogLine("prefill", t, running_req=16, queue_req=2, token_usage=0.66, new_seq=8,
                                   new_token=54400, cached_token=482304)
    assert decode == BatchLogLine("decode", t, running_req=24, queue_req=2, token_usage=0.66, num_token=233600,
                                  gen_throughput=239.06, accept_len=3.05)


def test_real_lines_without_speculative_decoding_in_both_orders() -> None:
    decode, prefill = parse_batch_log(REAL_PLAIN)
    assert (decode.kind, decode.running_req, decode.num_token, decode.token_usage, decode.gen_throughput,
            decode.queue_req, decode.accept_len, decode.new_seq) == ("decode", 32, 11179, 0.08, 1635.11, 0, None, None)
    assert (prefill.kind, prefill.new_seq, prefill.new_token, prefill.cached_token, prefill.running_req,
            prefill.queue_req, prefill.num_token) == ("prefill", 1, 158, 0, 31, 0, None)
    assert decode.time_ns == prefill.time_ns == _ns("2026-04-05 20:02:51")


def test_trailing_separators_and_hybrid_pools() -> None:
    decode, prefill = parse_batch_log(REAL_TRAILING)
    assert (decode.running_req, decode.queue_req, decode.gen_throughput) == (46, 0, 1447.08)
    assert (prefill.new_seq, prefill.cached_token, prefill.queue_req, prefill.token_usage) == (10, 10, 186, 0.0)
    [hybrid] = parse_batch_log(REAL_HYBRID)
    assert hybrid.token_usage == 0.02 and hybrid.new_token == 2048   # the max of full and SWA, as SGLang's metric


def test_format_variants_of_other_releases_and_settings() -> None:
    text = "\n".join([
        # releases before 0.5: `Prefill batch.` and `Decode batch.` (scheduler.py / scheduler_metrics_mixin.py)
        "[2025-06-01 12:00:00 TP0] Prefill batch. #new-seq: 1, #new-token: 8192, #cached-token: 0, "
        "token usage: 0.01, #running-req: 0, #queue-req: 3, ",
        "[2025-06-01 12:00:01 TP0] Decode batch. #running-req: 3, #token: 9000, token usage: 0.02, "
        "gen throughput (token/s): 98.50, #queue-req: 0, ",
        # 0.5.23 with DP attention, SGLANG_LOG_FORWARD_ITERS (`[forward_ct]`) and SGLANG_LOG_MS (`.mmm`),
        # as a Ray actor prints it; extra fields a release adds are skipped
        "(SchedulerActor pid=77) [2026-01-02 03:04:05.250 DP3 TP3 EP3] Decode batch [812], #running-req: 7, "
        "#token: 700, token usage: 0.10, accept len: 1.00, accept rate: 0.00, cap len: 3.00, pre-allocated usage: "
        "0.00, #prealloc-req: 0, #transfer-req: 0, #retracted-req: 0, cuda graph: True, gen throughput (token/s): "
        "12.00, #queue-req: 1, fwd occupancy: 93.10%, fwd+idle occupancy: 99.00%",
    ])
    old_prefill, old_decode, dp = parse_batch_log(text)
    assert (old_prefill.new_token, old_prefill.queue_req, old_prefill.dp_rank) == (8192, 3, None)
    assert (old_decode.num_token, old_decode.gen_throughput) == (9000, 98.5)
    assert dp.time_ns == _ns("2026-01-02 03:04:05") + 250_000_000
    assert (dp.dp_rank, dp.running_req, dp.accept_len, dp.queue_req) == (3, 7, 1.0, 1)


@pytest.mark.parametrize("line", [
    "The server is fired up and ready to roll!",
    "[2026-01-01 00:00:00 DP0 TP0 EP0] max_total_num_tokens=33111, chunked_prefill_size=8192, max_prefill_tokens=1",
    routed_line("session-1", 2),
    '[2026-01-01 00:00:00] INFO:     127.0.0.1:1 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "Decode batch, #running-req: 3, #queue-req: 0",          # no stamp: not a scheduler line
    "[2026-01-01 00:00:00] Verify batch, #running-req: 3",
])
def test_other_lines_are_skipped(line: str) -> None:
    assert parse_line(line) is None
    assert parse_batch_log(line + "\n" + line) == []


def test_the_simulators_lines_parse_back_to_what_they_were_printed_from() -> None:
    stamp = "2026-03-04 05:06:07"
    pre = prefill_line(stamp, " DP0 TP0 EP0", new_seq=3, new_token=8192, cached_token=640, token_usage=0.4567,
                       running_req=12, queue_req=5, pending_token=20480, cuda_graph=False, input_throughput=81920.0)
    assert pre == (f"[{stamp} DP0 TP0 EP0] Prefill batch, #new-seq: 3, #new-token: 8192, #cached-token: 640, "
                   "token usage: 0.46, #running-req: 12, #queue-req: 5, #pending-token: 20480, cuda graph: False, "
                   "input throughput (token/s): 81920.00")
    spec = decode_line(stamp, " TP0", running_req=7, num_token=40960, token_usage=0.31, accept=(2.714, 0.571),
                       cuda_graph=True, gen_throughput=1234.567, queue_req=3)
    assert spec == (f"[{stamp} TP0] Decode batch, #running-req: 7, #token: 40960, token usage: 0.31, accept len: 2.71, "
                    "accept rate: 0.57, cuda graph: True, gen throughput (token/s): 1234.57, #queue-req: 3")
    plain = decode_line(stamp, "", running_req=1, num_token=5, token_usage=0.0, accept=None, cuda_graph=False,
                        gen_throughput=0.0, queue_req=0)
    t = _ns(stamp)
    assert parse_batch_log("\n".join([pre, spec, plain])) == [
        BatchLogLine("prefill", t, 12, 5, 0.46, new_seq=3, new_token=8192, cached_token=640, dp_rank=0),
        BatchLogLine("decode", t, 7, 3, 0.31, num_token=40960, gen_throughput=1234.57, accept_len=2.71),
        BatchLogLine("decode", t, 1, 0, 0.0, num_token=5, gen_throughput=0.0),
    ]

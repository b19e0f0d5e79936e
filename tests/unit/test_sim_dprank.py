"""The simulator's attention-DP rank choice and its routing key."""

from __future__ import annotations

from multidict import CIMultiDict

from harness.sim.batching.topology.dprank import DpRanks, routed_line, routing_key


def test_routing_key_prefers_smg_header_then_correlation_id() -> None:
    assert routing_key(CIMultiDict({"x-smg-routing-key": "k", "X-Correlation-ID": "c"})) == "k"
    assert routing_key(CIMultiDict({"x-correlation-id": "c"})) == "c"
    assert routing_key(CIMultiDict({"X-Session-ID": "s", "X-SMG-Routing-Key": ""})) is None
    assert routed_line("a b", 3) == "[sim] routed key=a%20b rank=3"


def test_dp_rank_from_the_router_else_round_robin() -> None:
    dp = DpRanks(4, dp_attention=True)
    assert [dp.choose({}) for _ in range(5)] == [0, 1, 2, 3, 0]
    assert dp.choose({"data_parallel_rank": 2}) == 2
    assert dp.choose({"data_parallel_rank": 4}) == "data_parallel_rank must be in range [0, 3]"
    assert dp.choose({"data_parallel_rank": -1}) == "data_parallel_rank must be non-negative"
    assert dp.choose({"data_parallel_rank": True}) == "data_parallel_rank: an integer is required"
    plain = DpRanks(1, dp_attention=False)
    assert plain.choose({"data_parallel_rank": 7}) == 0                     # ignored without DP attention

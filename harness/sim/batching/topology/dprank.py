"""Which attention-DP rank serves a request, and the routing line that session stickiness is measured from.

With `--enable-dp-attention --dp-size K` one SGLang server holds K attention-DP ranks, each with its own
KV cache. A router can pick the rank: the body field `data_parallel_rank` (an int) sends the request to
that rank; SGLang answers 400 `data_parallel_rank must be in range [0, K-1]` (or `must be non-negative`)
otherwise, and dispatches requests without the field itself (the simulator: round robin). Without DP
attention the field is ignored.

Shepherd Model Gateway (`smg` 1.13.0) as InferenceX runs it in front of one DP-attention server,
`smg launch --worker-urls URL --policy consistent_hashing --dp-aware --request-id-headers x-correlation-id`,
behaves like this against the simulator (observed on its requests to the worker):

- It registers a worker from `GET /v1/models`, `/server_info` and `/model_info`; with `--dp-aware` it
  reads `dp_size` from `/server_info` and lists K workers `URL@0` .. `URL@K-1` (`GET /workers`: `dp_rank`,
  `dp_size`, `dp_base_url`).
- It forwards each chat completion to the base URL with `"data_parallel_rank": r` added to the JSON body,
  and passes the client's headers through (`X-SMG-Routing-Key`, `X-Correlation-ID`).
- `consistent_hashing` hashes the `X-SMG-Routing-Key` header: every request with one key lands on one
  rank. The `--request-id-headers` header (`x-correlation-id`) is not a routing key: requests carrying only
  `X-Correlation-ID`, or only `X-Session-ID`, are spread over ranks like requests with no header.
  (`--routing-key-headers` / `--sticky-sessions` change this; InferenceX sets neither.) AIPerf sends the
  key with `AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID=true` (its per-session correlation id).
- `--policy round_robin --dp-aware` cycles over the K ranks regardless of the key.

At `--log-level debug` (SGLang's flag; not at its default `info`) each finished chat completion that carries a
routing key is logged as `[sim] routed key=<key> rank=<r>` (the key URL-quoted; `X-SMG-Routing-Key`, else
`X-Correlation-ID`), which `harness.point.record.stickiness` reads back; the harness starts the simulated workers
of a deployment (always behind a router) at that level (`harness.recipe.multinode.deployment`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

RANK_FIELD = "data_parallel_rank"
ROUTING_KEY_HEADERS = ("X-SMG-Routing-Key", "X-Correlation-ID")
ROUTED_PREFIX = "[sim] routed "


class DpRanks:
    """The rank chooser of one server: the router's `data_parallel_rank`, else round robin."""

    def __init__(self, size: int, dp_attention: bool):
        self.size = max(1, size)
        self.dp_attention = dp_attention
        self._next = 0

    def choose(self, body: Mapping[str, Any]) -> int | str:
        """The rank that serves this request body, or SGLang's 400 message for a bad `data_parallel_rank`."""
        wanted = body.get(RANK_FIELD)
        if self.dp_attention and wanted is not None:
            if not isinstance(wanted, int) or isinstance(wanted, bool):
                return f"{RANK_FIELD}: an integer is required"
            if wanted < 0:
                return f"{RANK_FIELD} must be non-negative"
            if wanted >= self.size:
                return f"{RANK_FIELD} must be in range [0, {self.size - 1}]"
            return wanted
        rank = self._next
        self._next = (rank + 1) % self.size
        return rank


def routing_key(headers: Mapping[str, str]) -> str | None:
    """The session key of a request: `X-SMG-Routing-Key`, else `X-Correlation-ID`, else None."""
    for name in ROUTING_KEY_HEADERS:
        value = headers.get(name)
        if value:
            return value
    return None


def routed_line(key: str, rank: int) -> str:
    return f"{ROUTED_PREFIX}key={quote(key, safe='')} rank={rank}"

"""One request's life inside the simulator: what the engine computes and what the client is sent."""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass, field

from harness.sim.batching.kvcache import Block
from harness.sim.batching.prompt import output_text


@dataclass(slots=True)
class Chunk:
    """Output tokens [start, start + count) to send as one streamed event; `finish` on the last."""

    start: int
    count: int
    finish: str | None


@dataclass(eq=False)
class SimRequest:
    rid: str
    prompt_tokens: int
    block_hashes: tuple[bytes, ...]
    target_tokens: int  # completion tokens this request will produce
    finish_reason: str  # "length" (hit max tokens) or "stop" (the model stopped on its own)
    stream: bool
    arrival_ns: int  # time.time_ns() when the HTTP request arrived
    max_new_tokens: int = 0  # the request's output limit (max_tokens, else what the context leaves); 0: target_tokens
    ignore_eos: bool = False  # decodes all of max_new_tokens (SGLang reserves them all at admission)
    admitted_ns: int | None = None
    first_token_sent_ns: int | None = None
    last_token_sent_ns: int | None = None
    # engine state
    prefilled: int = 0  # prompt tokens present in the KV cache (cached or computed)
    cached_tokens: int = 0
    cached_device_tokens: int = 0
    cached_host_tokens: int = 0
    output: int = 0  # tokens generated so far
    emitted: int = 0  # tokens handed to the HTTP side
    private_tokens: int = 0  # GPU pool tokens owned by this request (not in shared blocks)
    inserted_blocks: int = 0  # leading prompt blocks already in the cache (matched or inserted)
    locked: list[Block] = field(default_factory=list)
    verify_steps: int = 0
    accepted_tokens: int = 0
    retractions: int = 0
    admitted_mono: int = 0
    first_token_mono: int = 0
    finished: bool = False
    aborted: bool = False
    logged: bool = False  # truth log / latency metrics written
    counted: bool = False  # the exported request counters include it (once it ended)
    hold_until_finish: bool = False  # `fixed` token mode: nothing decodes to text until the end
    text_tokens: list[str] | None = None  # the output's words when it is a known answer (eval answering)
    room: int | None = None  # bootstrap room of a disaggregated request (prefill/decode workers)
    dp_rank: int = 0  # attention-DP rank serving it (`harness.sim.batching.topology.dprank`)
    routing_key: str | None = None  # the client's session key (X-SMG-Routing-Key, else X-Correlation-ID)
    noise: float = 1.0  # this request's step-time multiplier (`harness.sim.batching.noise`)
    chunks: collections.deque[Chunk] = field(default_factory=collections.deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def max_new(self) -> int:
        return self.max_new_tokens or self.target_tokens

    @property
    def context_tokens(self) -> int:
        return self.prompt_tokens + self.output

    def text(self, start: int, count: int) -> str:
        """Text of output tokens [start, start + count)."""
        if self.text_tokens is None:
            return output_text(start, count)
        return "".join(self.text_tokens[start:start + count])

    def push(self, chunk: Chunk) -> None:
        self.chunks.append(chunk)
        self.wake.set()

"""What the predicted client sends: the recipe's trace corpus replayed as AgentX lanes, turn by turn.

Each of the point's `conc` lanes replays one session at a time, as the AgentX scenario does: the lane takes
the next trace of the corpus (lane i starts at trace i, then every `conc`-th), starts its first trajectory where
AIPerf's trajectory source starts it (`trajectory_start`: the same seeded instant t* between 25 % and 75 % of the
trace's recorded span, the same primer; later traces start at their first call), and sends the calls one after
the other: a call goes out when the previous one finished plus the call's recorded `think_time`.

Warm-up, as AIPerf's AgentX warm-up does it: from its start point each lane sends its primer and the warm-up
budget (`client.warmup_requests_per_lane`, else the preset's `PRESET_WARMUP_REQUESTS`) back to back
with one output token each (cache pressure), then the profiling window resumes every lane at its next call on the
recorded clock: lane i's first measured call goes out `t_next(i) - t_start(i)` after the window opens, less the
smallest such offset over the lanes (so the first call starts at once and lanes ramp up as they were recorded).
A subagent's calls are replayed in file order inside the same lane (the model ignores subagents running side by side
with their parent). Each call asks for exactly its recorded `out` tokens (AgentX sets `ignore_eos`).

Prompts are the recorded `in` tokens; their KV blocks are the recorded `hash_ids`, chained so that two calls share
a block exactly when they share the prefix up to it. Block ids are scoped to one lane's pass over one trace (AgentX
busts the first-turn prefix per lane, so lanes never share cache with each other).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from harness.traces.schema import Corpus, Trace, walk_calls

START_LO, START_HI = 0.25, 0.75
PRESET_WARMUP_REQUESTS = 10  # the agentx preset's warm-up requests per lane (after each lane's primer)


def warmup_calls(requests_per_lane: int | None) -> int:
    """Calls a lane sends before the window: its primer plus the warm-up budget (the preset's when unset)."""
    return 1 + (PRESET_WARMUP_REQUESTS if requests_per_lane is None else requests_per_lane)


@dataclass(frozen=True)
class Turn:
    """One call a lane sends."""

    prompt_tokens: int
    output_tokens: int
    block_hashes: tuple[bytes, ...]
    think_s: float  # client delay after the previous call finished
    t: float = 0.0  # recorded start, seconds since the session started


def chained_hashes(scope: str, hash_ids: list[int]) -> tuple[bytes, ...]:
    """Chained block hashes of a call's `hash_ids` within `scope` (a shared prefix gives shared hashes)."""
    out: list[bytes] = []
    prev = scope.encode()
    for hid in hash_ids:
        prev = hashlib.blake2b(prev + hid.to_bytes(8, "little"), digest_size=12).digest()
        out.append(prev)
    return tuple(out)


def trace_turns(trace: Trace, scope: str, start: int = 0) -> list[Turn]:
    """The calls of one trace from call `start` on, as turns (the first one with no think time)."""
    calls = [loc.request for loc in walk_calls(trace)][start:]
    turns = []
    prev_ids: list[int] = []
    prev_hashes: tuple[bytes, ...] = ()
    for i, call in enumerate(calls):
        think = 0.0 if i == 0 else float(call.think_time or 0.0)
        hashes = _extend_hashes(scope, prev_ids, prev_hashes, call.hash_ids)
        prev_ids, prev_hashes = call.hash_ids, hashes
        turns.append(Turn(prompt_tokens=max(1, call.input_tokens), output_tokens=max(1, call.output_tokens),
                          block_hashes=hashes, think_s=think, t=float(call.t)))
    return turns


def _extend_hashes(scope: str, prev_ids: list[int], prev: tuple[bytes, ...], ids: list[int]) -> tuple[bytes, ...]:
    """`chained_hashes(scope, ids)`, reusing the previous call's hashes over the prefix the two calls share (a
    session's next call usually extends the last one's)."""
    same = 0
    for a, b in zip(prev_ids, ids):
        if a != b:
            break
        same += 1
    out = list(prev[:same])
    last = out[-1] if out else scope.encode()
    for hid in ids[same:]:
        last = hashlib.blake2b(last + hid.to_bytes(8, "little"), digest_size=12).digest()
        out.append(last)
    return tuple(out)


def trajectory_start(trace: Trace, lane: int, seed: int) -> int:
    """The call (index in file order) lane `lane` primes its first trajectory with, as AIPerf's trajectory source
    picks it: an instant t* drawn uniformly from 25-75 % of the trace's recorded span (subagents' calls included)
    by a generator seeded with sha256 of `seed:trace id:lane`; the primer is the last main-agent call before t*."""
    calls = list(walk_calls(trace))
    times = [float(loc.request.t) * 1000.0 for loc in calls]   # AIPerf draws t* in milliseconds
    lo, hi = min(times), max(times)
    a, b = lo + START_LO * (hi - lo), lo + START_HI * (hi - lo)
    digest = hashlib.sha256(f"{seed}:{trace.id}:{lane}".encode()).digest()
    t_star = a if b <= a else float(np.random.default_rng(int.from_bytes(digest[:8], "big")).uniform(a, b))
    roots = [i for i, loc in enumerate(calls) if loc.depth == 0]
    after = [k for k, i in enumerate(roots) if times[i] >= t_star]
    nxt = after[0] if after else len(roots)
    return roots[max(0, nxt - 1)] if roots else 0


def lane_turns(corpus: Corpus, lane: int, conc: int, seed: int) -> Iterator[Turn]:
    """The endless sequence of turns lane `lane` of `conc` sends (seeded: the same seed, the same turns)."""
    if not corpus.traces:
        return
    n = len(corpus.traces)
    k = 0
    while True:
        index = (lane + k * conc) % n
        trace = corpus.traces[index]
        start = trajectory_start(trace, lane, seed) if k == 0 else 0
        yield from trace_turns(trace, f"{lane}:{k}:{trace.id}", start)
        k += 1


@dataclass
class LaneScript:
    """What one lane sends: its warm-up calls (one output token each, no think time), the recorded offset at
    which it resumes in the profiling window, and its measured calls from then on."""

    warmup: list[Turn]
    resume_s: float
    turns: Iterator[Turn]


def lane_script(corpus: Corpus, lane: int, conc: int, seed: int, warmup_count: int) -> LaneScript:
    """Lane `lane`'s `warmup_count` warm-up calls and its measured calls (see the module docstring)."""
    turns = lane_turns(corpus, lane, conc, seed)
    warm = [next(turns) for _ in range(warmup_count)]
    first = next(turns)
    resume = max(0.0, first.t - warm[0].t) if warm and first.t >= warm[0].t else first.think_s
    head = Turn(first.prompt_tokens, first.output_tokens, first.block_hashes, 0.0, first.t)
    warmup = [Turn(w.prompt_tokens, 1, w.block_hashes, 0.0, w.t) for w in warm]
    return LaneScript(warmup=warmup, resume_s=resume, turns=_chain(head, turns))


def _chain(head: Turn, rest: Iterator[Turn]) -> Iterator[Turn]:
    yield head
    yield from rest

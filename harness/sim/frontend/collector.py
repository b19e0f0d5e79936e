"""The simulator's cyclic garbage collector, kept out of the way of requests.

Python's collector runs on whatever allocation crosses its threshold, so under load it pauses the event loop at
random: a request arriving during a young collection waits 1–4 ms, during a full one 15–25 ms (the simulator at
c256: 160 young, 14 middle and 1 full collection in 45 s). None of them found anything to free: the simulator's
traffic (requests, streams, cached blocks) makes no reference cycles, reference counting frees it all. So once the
server is ready (everything alive then frozen out of the collector's reach), the collector runs only

- when the engine is idle (no request waiting, running or arriving), checked every `IDLE_CHECK_S`, and only if
  anything was allocated since the last collection, and
- under load, by itself, when the net allocations since the last collection pass `FORCED_AFTER` (its young
  threshold, raised: a bound on what a cycle that does appear could keep alive; minutes of traffic at c512, one
  pause where there were hundreds).

The truth log's stamps and the server's latencies are unchanged; what changes is that an arriving request no
longer waits behind a collection.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable

IDLE_CHECK_S = 1.0
IDLE_AFTER = 700           # CPython's default young threshold: idle, the collector keeps its usual pace
FORCED_AFTER = 1_000_000   # net allocations (gc.get_count()[0]) before the collector runs by itself under load


def due(busy: bool, allocated: int) -> bool:
    """Whether to collect now: the engine idle, and as much allocated since the last collection as would have
    set the collector off at its default pace."""
    return not busy and allocated >= IDLE_AFTER


def hold_collections() -> None:
    """From now on the collector runs only when `collect_when_idle` says: everything alive now is frozen (it
    lives as long as the server), and the automatic threshold is raised to the forced bound."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(FORCED_AFTER, 1, 1)


async def collect_when_idle(busy: Callable[[], bool]) -> None:
    """Run forever beside the engine: a full collection whenever `due`."""
    while True:
        await asyncio.sleep(IDLE_CHECK_S)
        if due(busy(), gc.get_count()[0]):
            gc.collect()

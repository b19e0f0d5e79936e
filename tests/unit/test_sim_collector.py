"""The simulator's garbage collector runs when the engine is idle, not on whatever allocation an arriving request
makes under load."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from harness.sim.frontend import collector


@pytest.fixture
def restored_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_collects_only_when_idle_and_after_as_much_as_the_default_pace() -> None:
    assert collector.due(busy=False, allocated=700)
    assert not collector.due(busy=False, allocated=699)        # idle, but next to nothing allocated
    assert not collector.due(busy=True, allocated=999_999)     # under load: the raised threshold decides


def test_held_collections_freeze_what_lives_and_raise_the_threshold(restored_gc: None) -> None:
    collector.hold_collections()
    assert gc.get_freeze_count() > 1000                          # the interpreter's own objects at least
    assert gc.get_threshold()[0] == collector.FORCED_AFTER
    before = gc.get_stats()[0]["collections"]
    junk = [[i] for i in range(5000)]                            # well past the default threshold of 700
    del junk
    assert gc.get_stats()[0]["collections"] == before           # no automatic collection on the way


def test_the_idle_loop_collects_cycles_once_the_engine_is_idle(restored_gc: None,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    collector.hold_collections()
    monkeypatch.setattr(collector, "IDLE_CHECK_S", 0.01)
    busy = [True]

    async def scenario() -> tuple[int, int]:
        task = asyncio.create_task(collector.collect_when_idle(lambda: busy[0]))
        for _ in range(1000):                                    # cycles only the collector can free
            a: list[object] = []
            a.append(a)
        await asyncio.sleep(0.05)
        while_busy = gc.get_stats()[2]["collections"]
        busy[0] = False
        for _ in range(500):
            await asyncio.sleep(0.01)
            if gc.get_stats()[2]["collections"] > while_busy:
                break
        task.cancel()
        return while_busy, gc.get_stats()[2]["collections"]

    gen2 = gc.get_stats()[2]["collections"]
    while_busy, after_idle = asyncio.run(scenario())
    assert while_busy == gen2                                    # busy: held, however much piled up
    assert after_idle == gen2 + 1                                # idle: one full collection

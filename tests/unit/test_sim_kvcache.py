"""Radix prefix cache over content blocks, GPU pool accounting, HiCache write policies."""

from __future__ import annotations

from harness.sim.batching.kvcache import KVCache


def hashes(prefix: str, n: int) -> tuple[bytes, ...]:
    return tuple(f"{prefix}{i}".encode() for i in range(n))


def fill(kv: KVCache, hs: tuple[bytes, ...]) -> list:
    """Compute and cache a prompt of len(hs) full blocks, then release it (a finished request)."""
    m = kv.match(hs, len(hs) * kv.block_tokens)
    kv.pin(m)
    new = len(hs) * kv.block_tokens - m.tokens
    assert kv.ensure_free(m.host_tokens + new)
    kv.load(m)
    locked = list(m.blocks)
    kv.alloc_private(new)
    kv.insert(hs, len(m.blocks), locked)
    kv.unlock(locked)
    return locked


def test_prefix_match_is_longest_shared_prefix() -> None:
    kv = KVCache(capacity=10_000, block_tokens=64)
    fill(kv, hashes("a", 4))
    assert kv.used == 4 * 64 and kv.private_tokens == 0
    m = kv.match(hashes("a", 6), 10_000)
    assert (len(m.blocks), m.device_tokens, m.host_tokens) == (4, 256, 0)
    assert kv.match(hashes("a", 6), 3 * 64 + 10).tokens == 192  # capped by max_tokens
    assert kv.match(hashes("b", 3), 10_000).tokens == 0


def test_eviction_is_lru_leaf_first_and_spares_locked_blocks() -> None:
    kv = KVCache(capacity=6 * 64, block_tokens=64)
    fill(kv, hashes("a", 3))
    fill(kv, hashes("b", 3))
    m = kv.match(hashes("b", 3), 1000)
    kv.pin(m)  # b is in use
    assert kv.ensure_free(2 * 64)
    # the two deepest blocks of the least recently used prefix went first
    assert kv.match(hashes("a", 3), 1000).tokens == 64
    assert kv.match(hashes("b", 3), 1000).tokens == 192
    assert not kv.ensure_free(6 * 64)  # b's blocks are locked
    assert kv.traffic.evicted_tokens == 3 * 64


def _churn(policy: str) -> KVCache:
    """Three 4-block sessions through an 8-block GPU pool, then the first session comes back."""
    kv = KVCache(capacity=8 * 64, block_tokens=64, hicache=True, host_capacity=64 * 64, write_policy=policy)
    for s in "abc":
        fill(kv, hashes(s, 4))  # c evicts a
    fill(kv, hashes("a", 4))  # a is loaded back from host, evicting b
    return kv


def test_write_back_and_write_through_move_different_traffic() -> None:
    wt = _churn("write_through")
    wb = _churn("write_back")
    # write-through copies every block to host as it is cached: 3 sessions x 4 blocks
    assert wt.traffic.backup_tokens == 12 * 64
    # write-back copies only what leaves the GPU: a, then b
    assert wb.traffic.backup_tokens == 8 * 64
    assert wt.traffic.evicted_tokens == wb.traffic.evicted_tokens == 8 * 64
    # both serve the returning session from host memory
    assert wt.traffic.load_back_tokens == wb.traffic.load_back_tokens == 4 * 64
    assert wt.match(hashes("a", 4), 1000).device_tokens == 4 * 64


def test_write_through_selective_backs_up_after_second_hit() -> None:
    kv = KVCache(capacity=100 * 64, block_tokens=64, hicache=True, host_capacity=100 * 64,
                 write_policy="write_through_selective")
    fill(kv, hashes("a", 2))
    assert kv.traffic.backup_tokens == 0
    fill(kv, hashes("a", 2))  # first hit
    assert kv.traffic.backup_tokens == 0
    fill(kv, hashes("a", 2))  # second hit reaches the threshold
    assert kv.traffic.backup_tokens == 2 * 64


def test_without_hicache_evicted_blocks_are_gone() -> None:
    kv = KVCache(capacity=4 * 64, block_tokens=64)
    fill(kv, hashes("a", 4))
    fill(kv, hashes("b", 4))
    assert kv.match(hashes("a", 4), 1000).tokens == 0
    assert kv.traffic.backup_tokens == 0 and kv.traffic.load_back_tokens == 0


def test_flush_drops_unlocked_blocks_only() -> None:
    kv = KVCache(capacity=100 * 64, block_tokens=64)
    fill(kv, hashes("a", 3))
    fill(kv, hashes("b", 2))
    m = kv.match(hashes("b", 2), 1000)
    kv.pin(m)
    kv.flush()
    assert kv.match(hashes("a", 3), 1000).tokens == 0
    assert kv.match(hashes("b", 2), 1000).tokens == 128
    assert kv.used == 128


def _random_traffic(kv: KVCache, seed: int, steps: int, flush_at: int, compact_at: int | None = None):
    """Requests over shared prefixes arriving and finishing at random (some refused for room, some loading host
    copies back), a flush at `flush_at` and a heap rebuild at `compact_at`; yields (step, the running requests'
    held blocks) after each step that was not a refusal."""
    import random

    rng = random.Random(seed)
    running: list[list] = []
    for step in range(steps):
        if running and (rng.random() < 0.45 or len(running) > 4):
            kv.unlock(running.pop(rng.randrange(len(running))))
        else:
            hs = hashes(rng.choice("abcdef"), rng.randint(1, 14))
            m = kv.match(hs, len(hs) * 64)
            kv.pin(m)
            new = len(hs) * 64 - m.tokens
            if not kv.ensure_free(m.host_tokens + new):
                kv.unlock(m.blocks)
                continue
            kv.load(m)
            locked = list(m.blocks)
            kv.alloc_private(new)
            kv.insert(hs, len(m.blocks), locked)
            running.append(locked)
        if step == compact_at:
            kv._compact()
        if step == flush_at:
            kv.flush()
        yield step, running


def _scanned_evictable(kv: KVCache) -> int:
    return sum(kv.block_tokens for b in kv.blocks.values() if b.on_gpu and b.locks == 0)


def test_evictable_tokens_kept_by_count_match_a_scan_through_requests_evictions_and_a_flush() -> None:
    """The count the scheduler reads (no scan) equals the scan over every block, with requests holding shared
    prefixes while others finish, host copies loaded back, evictions and a flush."""
    for policy in ("write_through", "write_through_selective", "write_back"):
        kv = KVCache(capacity=40 * 64, block_tokens=64, hicache=True, host_capacity=30 * 64, write_policy=policy)
        for step, _ in _random_traffic(kv, seed=7, steps=400, flush_at=300):
            assert kv.evictable_tokens() == _scanned_evictable(kv), (policy, step)
            assert all(b.on_gpu or b.on_host for b in kv.blocks.values()), (policy, step)  # what `match` relies on
        assert kv.traffic.evicted_tokens > 0 and kv.traffic.load_back_tokens > 0, policy


class _CheckedEviction(KVCache):
    """Each GPU eviction checked against a scan: the victim is the unheld GPU block touched longest ago, deepest
    first among those touched together."""

    def _evict_one_gpu(self) -> bool:
        candidates = [b for b in self.blocks.values() if b.on_gpu and b.locks == 0]
        expected = min(candidates, key=lambda b: (b.stamp, -b.depth, b.key)) if candidates else None
        evicted = super()._evict_one_gpu()
        assert evicted == (expected is not None)
        if expected is not None:
            assert not expected.on_gpu
        return evicted


def test_evictions_follow_the_lru_rule_while_held_blocks_wait_for_their_release() -> None:
    """Held blocks get no eviction entry until their last holder releases them; the lazy heap still evicts exactly
    what a scan would, through shared prefixes, host load-backs, refusals, a rebuild and a flush, in every write
    policy."""
    for policy in ("write_through", "write_through_selective", "write_back"):
        kv = _CheckedEviction(capacity=40 * 64, block_tokens=64, hicache=True, host_capacity=30 * 64,
                              write_policy=policy)
        for step, running in _random_traffic(kv, seed=11, steps=600, flush_at=400, compact_at=200):
            held = {b.key for locked in running for b in locked if b.on_gpu}
            live = {key for stamp, group in kv._gpu_queue for _, key in group if kv.blocks[key].stamp == stamp}
            assert not held & live, (policy, step)
        assert kv.traffic.evicted_tokens > 0 and kv.traffic.load_back_tokens > 0, policy

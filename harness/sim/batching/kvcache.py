"""GPU KV pool with a radix prefix cache over content blocks, plus an optional DRAM (HiCache) tier.

Blocks are identified by chained hashes (see `harness.sim.batching.prompt`), so a dict keyed by hash is
a radix tree over block sequences: a prompt's cached prefix is the longest run of its leading
block hashes present in the cache. Every block holds `block_tokens` tokens.

GPU pool accounting (tokens): `used = cached blocks on GPU * block_tokens + private tokens`,
where private tokens belong to running requests (uncached prompt remainder and outputs).
Blocks locked by a running request are never evicted. Eviction is LRU, deepest block first
among blocks touched at the same time (a radix tree evicts leaves before their parents). The GPU eviction
order is kept as a queue of touches: every operation stamps its blocks with one new time, so the blocks it
leaves unheld join the queue's end as one group, deepest first.

HiCache (`--enable-hierarchical-cache`) keeps a host copy of blocks:
- `write_through`: a block is backed up to host when it enters the cache;
- `write_through_selective`: backed up once it has been hit twice (SGLang's threshold 2);
- `write_back`: backed up only when it is evicted from the GPU.
A prefix hit on a host-only block loads it back to the GPU (`load_back_tokens`). The host pool
evicts LRU too. Traffic counters say how many tokens moved each way.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import operator
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

WRITE_POLICIES = ("write_through", "write_through_selective", "write_back")

_present: Callable[[Block | None], bool] = functools.partial(operator.is_not, None)  # a lookup that found a block


@dataclass(slots=True)
class Block:
    key: bytes
    depth: int
    on_gpu: bool = False
    on_host: bool = False
    locks: int = 0
    hits: int = 0
    stamp: int = 0  # last access (monotonic counter)
    entry: tuple[int, bytes] = field(init=False, repr=False, compare=False)  # its place among one touch's blocks

    def __post_init__(self) -> None:
        self.entry = (-self.depth, self.key)


@dataclass
class Match:
    """Result of a prefix lookup: the matched blocks and where their tokens come from."""

    blocks: list[Block]
    device_tokens: int
    host_tokens: int

    @property
    def tokens(self) -> int:
        return self.device_tokens + self.host_tokens


@dataclass
class Traffic:
    backup_tokens: int = 0  # GPU -> host
    load_back_tokens: int = 0  # host -> GPU
    evicted_tokens: int = 0  # dropped from the GPU pool
    host_evicted_tokens: int = 0
    pending_backup_tokens: int = 0  # backups since the engine last charged their transfer time
    pending_load_tokens: int = 0


@dataclass
class KVCache:
    capacity: int
    block_tokens: int
    hicache: bool = False
    host_capacity: int = 0
    write_policy: str = "write_through"
    blocks: dict[bytes, Block] = field(default_factory=dict)
    private_tokens: int = 0
    gpu_block_count: int = 0
    held_gpu_block_count: int = 0   # blocks on the GPU that a running request holds (locks > 0)
    host_block_count: int = 0
    traffic: Traffic = field(default_factory=Traffic)
    _clock: int = 0
    # GPU eviction entries: (stamp, [(-depth, key), ...] from last to first to evict), oldest stamp first; an entry
    # whose block has been touched again since (its stamp differs) or is held is skipped when it comes up
    _gpu_queue: deque[tuple[int, list[tuple[int, bytes]]]] = field(default_factory=deque)
    _gpu_entries: int = 0
    _host_heap: list[tuple[int, int, bytes]] = field(default_factory=list)

    # ---- accounting -------------------------------------------------------------------------
    @property
    def used(self) -> int:
        return self.gpu_block_count * self.block_tokens + self.private_tokens

    @property
    def free(self) -> int:
        return self.capacity - self.used

    @property
    def host_used(self) -> int:
        return self.host_block_count * self.block_tokens

    def cached_gpu_tokens(self) -> int:
        return self.gpu_block_count * self.block_tokens

    # ---- lookups ----------------------------------------------------------------------------
    def match(self, hashes: tuple[bytes, ...], max_tokens: int) -> Match:
        """Longest cached prefix of `hashes`, at most `max_tokens` tokens (GPU or host copies)."""
        # every block in `blocks` has a GPU or a host copy (one left with neither is dropped)
        looked_up = map(self.blocks.get, hashes[:max_tokens // self.block_tokens])
        found = cast(list[Block], list(itertools.takewhile(_present, looked_up)))
        host = sum(1 for b in found if not b.on_gpu) if self.host_block_count else 0
        return Match(found, (len(found) - host) * self.block_tokens, host * self.block_tokens)

    def _tick(self) -> int:
        """One access time for all blocks touched by one operation (so depth breaks the tie)."""
        if self._gpu_entries + len(self._host_heap) > 8 * len(self.blocks) + 4096:
            self._compact()
        self._clock += 1
        return self._clock

    def _touch(self, b: Block, stamp: int, unheld: list[tuple[int, bytes]]) -> None:
        """Stamp an access; an unheld GPU block's eviction entry goes to `unheld` (queued by `_queue_gpu`). A block
        a request holds gets its GPU eviction entry when the last holder releases it (`unlock`), not before: an
        entry queued while it is held could only be skipped, and each skipped entry is work for the rebuild
        (`_compact`) that stalls the scheduler. (`load`, `unlock` and `insert` stamp their blocks the same way,
        written out in their loops.)"""
        b.stamp = stamp
        if b.on_gpu and b.locks == 0:
            unheld.append(b.entry)
        if b.on_host:
            heapq.heappush(self._host_heap, (b.stamp, -b.depth, b.key))

    def _queue_gpu(self, stamp: int, unheld: list[tuple[int, bytes]]) -> None:
        """Queue the GPU eviction entries of one operation's blocks (all stamped `stamp`, the newest time)."""
        if unheld:
            unheld.sort(reverse=True)
            self._gpu_queue.append((stamp, unheld))
            self._gpu_entries += len(unheld)

    def pin(self, match: Match) -> None:
        """Lock matched blocks for a request so eviction cannot take them."""
        newly_held = 0
        for b in match.blocks:
            if b.on_gpu and b.locks == 0:
                newly_held += 1
            b.locks += 1
        self.held_gpu_block_count += newly_held

    def load(self, match: Match) -> int:
        """Count the hit and load host-only blocks of a pinned match back to the GPU.

        The caller must have made room for `match.host_tokens` first (`ensure_free`).
        Returns the tokens loaded from host memory.
        """
        loaded = 0
        stamp = self._tick()
        selective = self.hicache and self.write_policy == "write_through_selective"
        push = heapq.heappush
        unheld: list[tuple[int, bytes]] = []
        for b in match.blocks:
            b.hits += 1
            if not b.on_gpu:
                b.on_gpu = True
                self.gpu_block_count += 1
                if b.locks > 0:
                    self.held_gpu_block_count += 1
                loaded += self.block_tokens
            if selective and not b.on_host and b.hits >= 2:
                self._backup(b)
            b.stamp = stamp
            if b.locks == 0:  # on the GPU by now
                unheld.append(b.entry)
            if b.on_host:
                push(self._host_heap, (stamp, -b.depth, b.key))
        self._queue_gpu(stamp, unheld)
        self.traffic.load_back_tokens += loaded
        self.traffic.pending_load_tokens += loaded
        return loaded

    def unlock(self, blocks: list[Block]) -> None:
        stamp = self._tick()
        unheld: list[tuple[int, bytes]] = []
        host_heap, push = self._host_heap, heapq.heappush
        for b in blocks:
            b.locks -= 1
            b.stamp = stamp
            if b.on_gpu and b.locks == 0:
                unheld.append(b.entry)
            if b.on_host:
                push(host_heap, (stamp, -b.depth, b.key))
        self.held_gpu_block_count -= len(unheld)
        self._queue_gpu(stamp, unheld)

    def insert(self, hashes: tuple[bytes, ...], start: int, locked: list[Block], end: int | None = None) -> int:
        """Move a request's computed full blocks hashes[start:end] from private tokens into the cache.

        The new blocks are appended to `locked` (held until the request finishes). Returns the
        number of tokens that moved out of the private pool.
        """
        stamp = self._tick()
        blocks = self.blocks
        backup = self.hicache and self.write_policy == "write_through"
        push = heapq.heappush
        unheld: list[tuple[int, bytes]] = []
        added = newly_held = 0
        stop = len(hashes) if end is None else end
        for i in range(start, stop):
            h = hashes[i]
            b = blocks.get(h)
            if b is None:
                b = Block(h, i)
                blocks[h] = b
            was_held = b.on_gpu and b.locks > 0
            if not b.on_gpu:
                # (else someone else cached the same content meanwhile: our copy is simply freed)
                b.on_gpu = True
                added += 1
                if backup and not b.on_host:
                    self._backup(b)
            b.locks += 1
            if b.locks > 0 and not was_held:
                newly_held += 1
            elif was_held and b.locks <= 0:
                newly_held -= 1
            b.stamp = stamp
            if b.locks == 0:
                unheld.append(b.entry)
            if b.on_host:
                push(self._host_heap, (stamp, -b.depth, b.key))
            locked.append(b)
        moved = (stop - start) * self.block_tokens if stop > start else 0
        self._queue_gpu(stamp, unheld)
        self.gpu_block_count += added
        self.held_gpu_block_count += newly_held
        self.private_tokens -= moved
        return moved

    # ---- memory -----------------------------------------------------------------------------
    def evictable_tokens(self) -> int:
        """Tokens of the GPU blocks no running request holds (counted as blocks change, not by a scan: the
        scheduler asks on every prefill it plans while the pool is full)."""
        return (self.gpu_block_count - self.held_gpu_block_count) * self.block_tokens

    def ensure_free(self, tokens: int) -> bool:
        """Evict unlocked GPU blocks (LRU, leaves first) until `tokens` are free. False if impossible."""
        short = tokens - self.free
        while short > 0:
            if not self._evict_one_gpu():
                return False
            short -= self.block_tokens  # each eviction frees one block
        return True

    def _evict_one_gpu(self) -> bool:
        queue = self._gpu_queue
        while queue:
            stamp, entries = queue[0]
            key = entries.pop()[1]
            if not entries:
                queue.popleft()
            self._gpu_entries -= 1
            b = self.blocks.get(key)
            if b is None or not b.on_gpu or b.stamp != stamp:
                continue
            if b.locks > 0:
                continue  # pushed again when its last holder releases it
            if self.hicache and not b.on_host and self.write_policy == "write_back":
                self._backup(b)
            b.on_gpu = False
            self.gpu_block_count -= 1
            self.traffic.evicted_tokens += self.block_tokens
            if not b.on_host:
                del self.blocks[key]
            return True
        return False

    def _backup(self, b: Block) -> None:
        if self.host_capacity < self.block_tokens:
            return
        while self.host_used + self.block_tokens > self.host_capacity:
            if not self._evict_one_host():
                return
        b.on_host = True
        self.host_block_count += 1
        self.traffic.backup_tokens += self.block_tokens
        self.traffic.pending_backup_tokens += self.block_tokens
        heapq.heappush(self._host_heap, (b.stamp, -b.depth, b.key))

    def _evict_one_host(self) -> bool:
        heap = self._host_heap
        while heap:
            stamp, _, key = heapq.heappop(heap)
            b = self.blocks.get(key)
            if b is None or not b.on_host or b.stamp != stamp:
                continue
            if b.locks > 0 and not b.on_gpu:
                continue  # a request's only copy, pinned to be loaded back: re-pushed on unlock
            b.on_host = False
            self.host_block_count -= 1
            self.traffic.host_evicted_tokens += self.block_tokens
            if not b.on_gpu:
                del self.blocks[key]
            return True
        return False

    def _compact(self) -> None:
        """Rebuild the GPU queue and the host heap from the live blocks (held ones get their GPU entry on release)."""
        live = sorted((b.stamp, -b.depth, b.key) for b in self.blocks.values() if b.on_gpu and b.locks == 0)
        self._gpu_queue = deque((stamp, [(d, k) for _, d, k in reversed(list(group))])
                                for stamp, group in itertools.groupby(live, key=lambda e: e[0]))
        self._gpu_entries = len(live)
        self._host_heap = [(b.stamp, -b.depth, b.key) for b in self.blocks.values() if b.on_host]
        heapq.heapify(self._host_heap)

    def alloc_private(self, tokens: int) -> None:
        self.private_tokens += tokens

    def free_private(self, tokens: int) -> None:
        self.private_tokens -= tokens

    def flush(self) -> None:
        """Drop every unlocked block from both tiers (SGLang's /flush_cache)."""
        for key in [k for k, b in self.blocks.items() if b.locks == 0]:
            b = self.blocks.pop(key)
            if b.on_gpu:
                self.gpu_block_count -= 1
            if b.on_host:
                self.host_block_count -= 1
        self._gpu_queue.clear()
        self._gpu_entries = 0
        self._host_heap.clear()
        stamp = self._tick()
        unheld: list[tuple[int, bytes]] = []
        for b in self.blocks.values():
            self._touch(b, stamp, unheld)
        self._queue_gpu(stamp, unheld)

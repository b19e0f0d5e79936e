"""The step-level continuous-batching engine (one asyncio task, like SGLang's scheduler loop).

Each iteration picks one step, asks the timing model how long it takes, sleeps until the
step's scheduled end, then commits its effects (tokens produced, chunks handed to the HTTP side):

- **Prefill** when requests are waiting (or one is mid-way through a chunked prefill) and the
  running batch has room (`--max-running-requests`): admit waiting requests first-come
  first-served while the GPU pool can hold each one's uncached prompt and future output beside what
  the running requests may still decode (SGLang's rule, `harness.sim.batching.admission`; the first
  that does not fit waits, and so does everyone behind it), match their prompt against the prefix cache, and compute up to
  `--chunked-prefill-size` new tokens in this step (the last admitted request may be cut into
  chunks; its next chunk goes first in the next prefill step). A request whose prompt is done
  produces its first token and joins the decode batch. With `--prefill-decode-interval N`, after
  a prefill step at least N decode steps run before the next admission (only while the decode
  batch holds at least `--prefill-decode-interval-min-bs` requests).
- **Decode** otherwise: every running request commits one token, or under speculative decoding
  the accept length drawn once for the whole batch (capped by what the request still has to
  produce). If the GPU pool cannot hold the new tokens even after evicting the prefix cache,
  requests are retracted (preempted; fewest output tokens first) back to the head of the queue and
  re-prefilled later.
- **Streaming**: the first token is sent at once, then a chunk whenever at least
  `--stream-interval` unsent tokens have accumulated, and the rest at the end; after each step the streams
  given a chunk wake a group per turn of the event loop (`harness.sim.batching.outbox`).

Steps are scheduled back to back on a virtual clock (a step starts when the previous one was
due to end), so scheduling lag does not accumulate.
"""

from __future__ import annotations

import asyncio
import collections
import random
import time
from collections.abc import Callable

from harness.sim.batching.admission import (
    NewTokenRatio,
    admission_need,
    fits,
    future_tokens,
    retraction_order_key,
    running_reservation,
)
from harness.sim.batching.engine_config import EngineConfig
from harness.sim.batching.engine_stats import LAG_BUCKETS, EngineStats
from harness.sim.batching.kvcache import KVCache
from harness.sim.batching.noise import Noise
from harness.sim.batching.outbox import Outbox
from harness.sim.batching.prompt import BLOCK_TOKENS
from harness.sim.batching.request import Chunk, SimRequest
from harness.sim.batching.schedlog import SchedulerLog
from harness.sim.batching.spec import AcceptSampler, check_at_verify
from harness.sim.batching.timing import TimingModel

RESYNC_AFTER_S = 0.05  # if the loop falls this far behind its virtual clock, restart from now


Plan = tuple[float, Callable[[], None]]


class Engine:
    def __init__(self, cfg: EngineConfig, timing: TimingModel, on_finish: Callable[[SimRequest], None] | None = None,
                 noise: Noise | None = None, log: SchedulerLog | None = None):
        self.cfg = cfg
        self.timing = timing
        self.noise = noise if noise is not None else Noise(cfg.seed)
        self.kv = KVCache(
            capacity=cfg.kv_capacity,
            block_tokens=BLOCK_TOKENS,
            hicache=cfg.hicache,
            host_capacity=cfg.host_capacity if cfg.hicache else 0,
            write_policy=cfg.write_policy,
        )
        self.rng = random.Random(cfg.seed)
        self.sampler = AcceptSampler(cfg.spec, cfg.sim_env, timing.p.natural_accept_fraction, self.rng)
        self.waiting: collections.deque[SimRequest] = collections.deque()
        self.arrived: collections.deque[SimRequest] = collections.deque()  # KV transferred in (decode role)
        self.chunked: SimRequest | None = None
        self.running: list[SimRequest] = []
        self.stats = EngineStats()
        self.stats.recent_accept = collections.deque(maxlen=max(1, cfg.decode_log_interval))
        self.stats.recent_gen = collections.deque(maxlen=max(1, cfg.decode_log_interval))
        self.on_finish = on_finish
        self.log = log  # SGLang's `Prefill batch` / `Decode batch` lines (`harness.sim.batching.schedlog`)
        self.stalled = False
        self._decodes_since_prefill = 1 << 30
        self._verified = False
        self._wake = asyncio.Event()
        self.outbox = Outbox(cfg.stream_interval, cfg.stream_rule)
        self._prefill_target: dict[int, int] = {}
        self.new_token_ratio = NewTokenRatio(cfg.schedule_conservativeness)

    # ---- API for the HTTP side ----------------------------------------------------------------
    def submit(self, req: SimRequest) -> None:
        req.noise = self.noise.request_factor()
        self.waiting.append(req)
        self._wake.set()

    def submit_prefilled(self, req: SimRequest) -> None:
        """A request whose prompt KV (and first token) came from a prefill worker: it joins the running batch
        as soon as the batch and the GPU pool have room, without a prefill step."""
        req.noise = self.noise.request_factor()
        self.arrived.append(req)
        self._wake.set()

    def abort(self, req: SimRequest) -> None:
        """Drop a request wherever it is (client went away); its resources are released now."""
        if req.finished or req.aborted:
            return
        req.aborted = True
        self.stats.aborted_total += 1
        self._count_ended(req)
        if req in self.waiting:
            self.waiting.remove(req)
        if req in self.arrived:
            self.arrived.remove(req)
        if self.chunked is req:
            self.chunked = None
        if req in self.running:
            self.running.remove(req)
        self._release(req)
        self._wake.set()

    @property
    def busy(self) -> bool:
        return bool(self.waiting or self.running or self.chunked or self.arrived)

    @property
    def num_running(self) -> int:
        return len(self.running) + (1 if self.chunked else 0)

    def stall(self) -> None:
        """Stop stepping for good (fault injection): connections stay open, nothing more is produced."""
        self.stalled = True

    # ---- the loop -----------------------------------------------------------------------------
    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        next_start = loop.time()
        while True:
            plan = None if self.stalled else self._plan()
            await self.outbox.wake_streams()
            if plan is None:
                self.new_token_ratio.reset()  # SGLang resets the ratio whenever the scheduler idles
                self._wake.clear()
                await self._wake.wait()
                next_start = loop.time()
                continue
            duration, apply = plan
            now = loop.time()
            start = next_start if now - next_start < RESYNC_AFTER_S else now
            end = start + duration
            delay = end - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                await asyncio.sleep(0)
            lag = loop.time() - end
            self.stats.lag_hist[min(LAG_BUCKETS, max(0, int(lag * 10_000)))] += 1
            if self.stalled:
                continue
            apply()
            await self.outbox.wake_streams()
            next_start = end

    def _plan(self) -> Plan | None:
        cfg = self.cfg
        if self.arrived:
            self._admit_transferred()
        can_admit = bool(self.waiting) and self.num_running < cfg.max_running
        want_prefill = self.chunked is not None or can_admit
        # SGLang defers every prefill while the interval runs, the next chunk of a chunked prefill included
        # (scheduler.py `_should_defer_prefill`, re-armed after every extend batch, chunks too)
        if (
            want_prefill
            and self.running
            and cfg.prefill_decode_interval > 0
            and len(self.running) >= cfg.prefill_decode_interval_min_bs
            and self._decodes_since_prefill < cfg.prefill_decode_interval
        ):
            want_prefill = False
        if want_prefill:
            plan = self._plan_prefill()
            if plan is not None:
                return plan
        if self.running:
            return self._plan_decode()
        return None

    def _admit_transferred(self) -> None:
        """Take transferred requests into the running batch (their KV occupies the pool; the first token,
        made by the prefill worker, goes out at once)."""
        while self.arrived and self.num_running < self.cfg.max_running:
            r = self.arrived[0]
            if not self.kv.ensure_free(r.prompt_tokens + 1):
                if not self.running and self.chunked is None and self.kv.private_tokens == 0:
                    self.arrived.popleft()
                    self._reject(r)
                    continue
                return
            self.arrived.popleft()
            self.kv.alloc_private(r.prompt_tokens)
            r.private_tokens += r.prompt_tokens
            r.prefilled = r.prompt_tokens
            r.admitted_ns = time.time_ns()
            r.admitted_mono = time.monotonic_ns()
            self._produce(r, 1)
            if not r.finished:
                self.running.append(r)

    # ---- prefill ------------------------------------------------------------------------------
    def _plan_prefill(self) -> Plan | None:
        cfg = self.cfg
        kv = self.kv
        budget = cfg.chunked_prefill_size if cfg.chunked_prefill_size > 0 else 1 << 62
        budget = min(budget, max(cfg.max_prefill_tokens, 1)) if cfg.chunked_prefill_size > 0 else budget
        work: list[tuple[SimRequest, int, int]] = []
        loaded = 0
        reserved = self._reserved_tokens()
        if self.chunked is not None:
            r = self.chunked
            left = self._prefill_target[id(r)] - r.prefilled
            take = min(left, budget)
            if not kv.ensure_free(take):
                take = 0
                if not self.running:
                    # Nothing else holds memory that could be freed: it can never fit.
                    self.chunked = None
                    self._release(r)
                    self._reject(r)
            if take > 0:
                kv.alloc_private(take)
                r.private_tokens += take
                work.append((r, r.prefilled, take))
                budget -= take
                reserved -= take  # now allocated, no longer only reserved
                self.chunked = r if take < left else None
        while (
            self.chunked is None
            and self.waiting
            and budget > 0
            and len(self.running) + len(work) < cfg.max_running
        ):
            r = self.waiting[0]
            target = r.prompt_tokens + r.output
            m = kv.match(r.block_hashes, target - 1)
            kv.pin(m)
            uncached = target - m.tokens
            take = min(uncached, budget)
            need = admission_need(uncached + m.host_tokens, r.max_new, r.output)
            if not self._room_for(need, reserved) or not kv.ensure_free(m.host_tokens + take):
                kv.unlock(m.blocks)
                if not self.running and not work and self.chunked is None and kv.private_tokens == 0:
                    self.waiting.popleft()
                    self._reject(r)
                    continue
                break
            self.waiting.popleft()
            loaded += kv.load(m)
            r.locked = list(m.blocks)
            r.inserted_blocks = len(m.blocks)
            r.prefilled = m.tokens
            if r.admitted_ns is None:
                r.admitted_ns = time.time_ns()
                r.admitted_mono = time.monotonic_ns()
                r.cached_tokens = m.tokens
                r.cached_device_tokens = m.device_tokens
                r.cached_host_tokens = m.host_tokens
            self._prefill_target[id(r)] = target
            kv.alloc_private(take)
            r.private_tokens += take
            work.append((r, m.tokens, take))
            budget -= take
            reserved += need
            if take < uncached:
                self.chunked = r
        if not work:
            return None
        t = self.timing.prefill([(c, n) for _, c, n in work])
        t = self.noise.step(t, [(n, r.noise) for r, _, n in work])
        t += self._transfer_cost(loaded)
        running = len(self.running)

        def apply() -> None:
            self.stats.prefill_steps += 1
            self._decodes_since_prefill = 0
            for r, _, n in work:
                if r.aborted:
                    continue
                r.prefilled += n
                self._insert_blocks(r)
                if r.prefilled >= self._prefill_target[id(r)]:
                    del self._prefill_target[id(r)]
                    self._produce(r, 1)
                    if not r.finished:
                        self.running.append(r)
            if self.log is not None:
                c = self.chunked
                rest = self._prefill_target.get(id(c), c.prefilled) - c.prefilled if c is not None else 0
                self.log.prefill(work, running, self.waiting, rest, kv)

        return t, apply

    def _reserved_tokens(self) -> float:
        """What the running requests may still decode (SGLang's offset), plus the chunked request's rest."""
        held = running_reservation(((r.max_new, r.output, r.ignore_eos) for r in self.running),
                                   self.new_token_ratio.current)
        c = self.chunked
        if c is not None:
            held += self._prefill_target.get(id(c), c.prefilled) - c.prefilled + future_tokens(c.max_new, c.output)
        return held

    def _room_for(self, need: int, reserved: float) -> bool:
        """Whether `need` tokens fit beside `reserved` in the free plus evictable pool (evictable counted only
        when the free part is not enough)."""
        kv = self.kv
        return fits(need, kv.free - reserved) or fits(need, kv.free + kv.evictable_tokens() - reserved)

    def _insert_blocks(self, r: SimRequest) -> None:
        full = min(r.prefilled // BLOCK_TOKENS, len(r.block_hashes))
        if full > r.inserted_blocks:
            moved = self.kv.insert(r.block_hashes, r.inserted_blocks, r.locked, full)
            r.private_tokens -= moved
            r.inserted_blocks = full

    # ---- decode -------------------------------------------------------------------------------
    def _plan_decode(self) -> Plan:
        cfg = self.cfg
        if cfg.spec.enabled and not self._verified:
            check_at_verify(cfg.spec, cfg.sim_env)
            self._verified = True
        al = self.sampler.draw()
        need = sum([min(al, r.target_tokens - r.output) for r in self.running])
        retracted = False
        while not self.kv.ensure_free(need) and len(self.running) > 1:
            victim = min(self.running, key=lambda r: retraction_order_key(r.output, r.prompt_tokens))
            self.running.remove(victim)
            need -= min(al, victim.target_tokens - victim.output)
            self._retract(victim)
            retracted = True
        if retracted:
            self.new_token_ratio.after_retract((r.max_new, r.output) for r in self.running)
        else:
            self.new_token_ratio.decay_step()
        batch = list(self.running)
        ctx = sum([r.prompt_tokens + r.output for r in batch])  # their context_tokens
        t = self.timing.decode(len(batch), ctx, cfg.spec.verify_width, cfg.spec.enabled)
        t = self.noise.step(t, [(1.0, r.noise) for r in batch])
        t += self._transfer_cost(0)

        def apply() -> None:
            st = self.stats
            st.decode_steps += 1
            self._decodes_since_prefill += 1
            produced = 0
            spec = cfg.spec.enabled
            for r in batch:
                if r.aborted or r.finished:
                    continue
                n = min(al, r.target_tokens - r.output)
                if spec:
                    r.verify_steps += 1
                    r.accepted_tokens += al
                    st.verify_calls_total += 1
                    st.accepted_tokens_total += al
                produced += n
                self._produce(r, n)
            if spec and batch:
                st.recent_accept.append(al)
            st.recent_gen.append((t, produced))
            self.running = [r for r in self.running if not r.finished]
            if self.log is not None and self.log.decode_step(len(batch), produced, al):
                graph = len(batch) <= self.timing.layout.cuda_graph_max_bs
                self.log.decode(len(batch), self.kv, graph, len(self.waiting))

        return t, apply

    def _retract(self, r: SimRequest) -> None:
        self.stats.retracted_total += 1
        self.stats.retracted_input_tokens_total += r.prompt_tokens
        r.retractions += 1
        self._release(r)
        r.prefilled = 0
        r.inserted_blocks = 0
        self.waiting.appendleft(r)

    def _transfer_cost(self, loaded_tokens: int) -> float:
        """Blocking load-back time plus the non-overlapped share of backups since the last step."""
        kv = self.kv
        if not kv.hicache:
            return 0.0
        backup = kv.traffic.pending_backup_tokens
        kv.traffic.pending_backup_tokens = 0
        kv.traffic.pending_load_tokens = 0
        t_load = self.timing.transfer(loaded_tokens)
        t_backup = self.timing.transfer(backup)
        self.stats.load_back_seconds += t_load
        self.stats.backup_seconds += t_backup
        return t_load + t_backup * (1.0 - self.timing.p.backup_overlap)

    # ---- outputs ------------------------------------------------------------------------------
    def _produce(self, r: SimRequest, n: int) -> None:
        if n <= 0:
            return
        self.kv.private_tokens += n
        r.private_tokens += n
        r.output += n
        if r.output == n and r.first_token_mono == 0:
            r.first_token_mono = time.monotonic_ns()
        if r.output >= r.target_tokens:
            r.finished = True
            self._count_ended(r)
            self.outbox.emit(r, final=True)
            self._release(r)
            if self.on_finish is not None:
                self.on_finish(r)
            return
        self.outbox.emit(r, final=False)

    def _count_ended(self, r: SimRequest) -> None:
        """Bump the exported request counters once, when `r` finishes or is aborted (as SGLang does)."""
        if r.counted:
            return
        r.counted = True
        st = self.stats
        st.requests_total += 1
        st.prompt_tokens_total += r.prompt_tokens
        st.generation_tokens_total += r.output
        st.cached_tokens_device += r.cached_device_tokens
        st.cached_tokens_host += r.cached_host_tokens
        st.spec_verify_calls_total += r.verify_steps

    def _release(self, r: SimRequest) -> None:
        if r.locked:
            self.kv.unlock(r.locked)
            r.locked = []
        if r.private_tokens:
            self.kv.free_private(r.private_tokens)
            r.private_tokens = 0
        self._prefill_target.pop(id(r), None)

    def _reject(self, r: SimRequest) -> None:
        """A request that cannot fit in an empty GPU pool is aborted (SGLang rejects it too)."""
        r.aborted = True
        self.stats.aborted_total += 1
        self._count_ended(r)
        r.push(Chunk(r.emitted, 0, "abort"))

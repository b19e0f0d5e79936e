"""The simulator's engine driven on a virtual clock: a whole benchmark window in well under a second per point.

The engine (`harness.sim.batching.engine.Engine`) plans each step (`_plan`: what runs, how long it takes by the
timing model, the noise) and commits it (`apply`); the HTTP server sleeps between the two. Here the clock jumps
instead: a step's effects land at `start + duration`, arrivals that fall inside a step join the queue when it ends
(as they would wake the real loop), and when nothing can run the clock jumps to the next arrival.

The client side is the AgentX lane model of `harness.predict.workload`. Phases, as AIPerf's AgentX run has them:
a warm-up in which every lane sends its warm-up calls back to back (a lane that is done waits for the others),
then the profiling window of `duration_s`, each lane resuming at its recorded offset (or, with `burst`, every
lane at the window's start, as AIPerf's `--burst-phase-starts`): the calls sent in it and
finished by its end are the measured ones, calls still running at the end are cancelled (and not counted), as
AIPerf does at the duration cutoff.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from harness.predict.workload import LaneScript, Turn
from harness.sim.batching.engine import Engine
from harness.sim.batching.outbox import Outbox
from harness.sim.batching.request import SimRequest

MAX_STEPS = 5_000_000  # a bound on the work of one point, whatever the recipe says


@dataclass(frozen=True)
class Finished:
    """One measured call: when it was sent, its first token, its end, and its sizes (virtual seconds)."""

    sent: float
    first_token: float
    end: float
    prompt_tokens: int
    output_tokens: int


@dataclass
class Window:
    """What a virtual run observed in its profiling window."""

    start: float                  # when the window began: the warm-up's length (virtual seconds)
    duration: float
    finished: list[Finished] = field(default_factory=list)
    kv_peak: float = 0.0          # highest KV pool use, fraction of the pool (prefix cache included)
    kv_requests_peak: float = 0.0  # highest share of the pool the running requests' contexts need
    kv_time_weighted: float = 0.0  # integral of the use fraction over the window (seconds)
    queue_peak: int = 0           # most requests waiting
    queue_time_weighted: float = 0.0
    running_time_weighted: float = 0.0
    cancelled: int = 0
    steps: int = 0


class _Unstreamed(Outbox):
    """An outbox that hands nothing: the virtual client reads each request's state, never its stream."""

    def emit(self, r: SimRequest, final: bool) -> None:
        return None


@dataclass
class _Lane:
    turns: Iterator[Turn]
    upcoming: Turn | None = None  # the next call this lane sends (its think time delays it)
    resume_s: float = 0.0
    done: int = 0
    request: SimRequest | None = None
    sent: float = 0.0
    first: float | None = None
    held: bool = False


def run_window(engine: Engine, lanes: list[LaneScript], duration_s: float, context_length: int,
               burst: bool = False, grace_s: float = 0.0) -> Window:
    """Replay `lanes` against `engine` through a warm-up and a `duration_s` window; return what the window saw.
    `burst`: every lane's first call of the window at its start, not at its recorded offset. `grace_s`: how long
    calls sent in the window may run past its end and still count (AIPerf's grace period); the window's length
    then runs to the last of them, as AIPerf's does."""
    engine.outbox = _Unstreamed(engine.cfg.stream_interval, engine.cfg.stream_rule)
    state = [_Lane(_then(script.warmup, script.turns), resume_s=script.resume_s) for script in lanes]
    for lane in state:
        lane.upcoming = next(lane.turns)
    warmup_requests = [len(script.warmup) for script in lanes]
    first_resume = min((script.resume_s for script in lanes), default=0.0)
    arrivals: list[tuple[float, int]] = [(0.0, i) for i in range(len(state)) if warmup_requests[i] > 0]
    for i, n in enumerate(warmup_requests):
        state[i].held = n == 0
    heapq.heapify(arrivals)
    now = 0.0
    window: Window | None = None
    steps = 0
    seq = 0
    seen = (-1, -1)  # the engine's (requests ended, prefill steps) when the lanes were last looked at

    def send(i: int, t: float) -> None:
        nonlocal seq
        lane = state[i]
        turn = lane.upcoming
        assert turn is not None
        lane.upcoming = next(lane.turns)
        prompt = min(turn.prompt_tokens, context_length - 1)
        seq += 1
        target = max(1, min(turn.output_tokens, context_length - prompt))
        # as the server takes an AgentX call: max_tokens is the recorded output, ignore_eos on (so the
        # scheduler reserves all of it, `harness.sim.batching.admission`)
        req = SimRequest(rid=f"lane{i}-{seq}", prompt_tokens=prompt, block_hashes=turn.block_hashes,
                         target_tokens=target, max_new_tokens=target, ignore_eos=True,
                         finish_reason="length", stream=True, arrival_ns=0)
        lane.request, lane.sent, lane.first = req, t, None
        engine.submit(req)

    def schedule_next(i: int, t: float) -> None:
        lane = state[i]
        if window is None and lane.done >= warmup_requests[i]:
            lane.held = True
            return
        heapq.heappush(arrivals, (t + _peek_think(lane), i))

    while steps < MAX_STEPS:
        if window is None and all(lane.held for lane in state):
            window = Window(start=now, duration=duration_s)
            for i, lane in enumerate(state):
                lane.held = False
                heapq.heappush(arrivals, (now if burst else now + lane.resume_s - first_resume, i))
        end = window.start + duration_s if window is not None else float("inf")
        stop = end + max(0.0, grace_s)
        while arrivals and arrivals[0][0] <= now:
            due, i = heapq.heappop(arrivals)
            if due < end:  # a lane sends nothing after the window
                send(i, now)
        plan = engine._plan()
        if plan is None:
            if not arrivals or now >= end:
                break
            nxt = min(arrivals[0][0], end)
            if window is not None:
                _observe(window, engine, now, nxt)
            now = nxt
            if now >= end:
                break
            continue
        duration, apply = plan
        step_end = now + duration
        if window is not None:
            _observe(window, engine, now, min(step_end, stop))
            window.steps += 1
        apply()
        steps += 1
        now = step_end
        if now >= stop:
            break
        # a call gets its first token only in a prefill step, and ends only where the engine counts it ended
        st = engine.stats
        if (st.requests_total, st.prefill_steps) != seen:
            seen = (st.requests_total, st.prefill_steps)
            _look_at_lanes(state, window, now, schedule_next)
        if now >= end and window is not None and not any(
                lane.request is not None and lane.sent >= window.start for lane in state):
            break  # the window is over and every call it sent has ended
    if window is None:
        window = Window(start=now, duration=0.0)
    else:
        window.duration = max(duration_s, min(now, window.start + duration_s + max(0.0, grace_s)) - window.start)
    window.cancelled = sum(1 for lane in state if lane.request is not None and lane.sent >= window.start)
    return window


def _look_at_lanes(state: list[_Lane], window: Window | None, now: float,
                   schedule_next: Callable[[int, float], None]) -> None:
    """After a step ending at `now`: note first tokens, record each call that ended (in the window if it was sent
    in it) and schedule its lane's next call."""
    for i, lane in enumerate(state):
        req = lane.request
        if req is None:
            continue
        if lane.first is None and req.output > 0:
            lane.first = now
        if req.finished or req.aborted:
            lane.request = None
            lane.done += 1
            if window is not None and lane.sent >= window.start and req.finished:
                window.finished.append(Finished(lane.sent, lane.first if lane.first is not None else now, now,
                                                req.prompt_tokens, req.output))
            schedule_next(i, now)


def _then(first: list[Turn], rest: Iterator[Turn]) -> Iterator[Turn]:
    yield from first
    yield from rest


def _peek_think(lane: _Lane) -> float:
    """The think time before the lane's next call."""
    return lane.upcoming.think_s if lane.upcoming is not None else 0.0


def _observe(window: Window, engine: Engine, t0: float, t1: float) -> None:
    """Account the engine's state (constant over [t0, t1)) into the window's pool and queue figures."""
    dt = max(0.0, t1 - t0)
    kv = engine.kv
    use = kv.used / kv.capacity if kv.capacity else 0.0
    window.kv_peak = max(window.kv_peak, use)
    held = sum([r.prompt_tokens + r.output for r in engine.running])  # their context_tokens
    held += engine.chunked.prefilled if engine.chunked else 0
    window.kv_requests_peak = max(window.kv_requests_peak, held / kv.capacity if kv.capacity else 0.0)
    window.kv_time_weighted += use * dt
    queued = len(engine.waiting)
    window.queue_peak = max(window.queue_peak, queued)
    window.queue_time_weighted += queued * dt
    window.running_time_weighted += engine.num_running * dt


def pooled(windows: list[Window]) -> Window:
    """Several windows of one point (different client samples) as one window of their summed length: calls and
    time-weighted figures add up, peaks take the highest, the warm-up is their mean."""
    out = Window(start=sum(w.start for w in windows) / max(1, len(windows)),
                 duration=sum(w.duration for w in windows))
    for w in windows:
        out.finished.extend(w.finished)
        out.kv_peak = max(out.kv_peak, w.kv_peak)
        out.kv_requests_peak = max(out.kv_requests_peak, w.kv_requests_peak)
        out.kv_time_weighted += w.kv_time_weighted
        out.queue_peak = max(out.queue_peak, w.queue_peak)
        out.queue_time_weighted += w.queue_time_weighted
        out.running_time_weighted += w.running_time_weighted
        out.cancelled += w.cancelled
        out.steps += w.steps
    return out

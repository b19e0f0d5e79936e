"""Synthetic agentic coding sessions in the Weka v1 format, deterministic for a seed.

Session `i` of seed `S` depends only on (S, i, the config), so a larger corpus extends a smaller one.
Shape of a session (all ranges inclusive, every draw from the session's own `random.Random`):

* Root prefix: a system prompt of `system_tokens` and tool definitions of `tool_tokens` tokens, then a
  first user prompt of `user_prompt_tokens`. Prompts are made of `block_size`-token blocks; a block id
  stands for fixed content, so every request's `hash_ids` cover its whole context and the
  ceil(in / block_size) rule holds: (len - 1) * block_size < in <= len * block_size.
* Turns: `turns` root requests (streaming, `type: "s"`). The context grows turn by turn: each turn
  appends its own output and then the next input (a tool result after `tool_use`, a user prompt after
  `end_turn`). Only the last, partly filled block of the previous context changes id; every full
  block is shared with all earlier requests, which is what a prefix cache can reuse.
* Tasks: a user task is `task_tool_turns` `tool_use` turns followed by one `end_turn` turn; the
  session's last request always ends with `end_turn`. A session stops early rather than let a request's
  in + out exceed `max_context`.
* Output tokens: log-normal with median `out_median` and shape `out_sigma`, clipped to `out_tokens`.
  Tool results: log-normal with median `tool_result_median`, shape `tool_result_sigma`, clipped to
  `tool_result_tokens`. Follow-up user prompts: uniform in `user_prompt_tokens`.
* Times (seconds, rounded to milliseconds): a request's `api_time` is
  `api_base_s + in / prefill_tps + out / decode_tps` (streaming `ttft` is its first two terms);
  the think time before a request is log-normal (median `tool_think_median_s`, shape
  `tool_think_sigma`, clipped to `tool_think_s`) after a tool call and uniform in `user_think_s`
  after `end_turn`. `t` of a request = previous end + its think time.
* Subagents: after a `tool_use` turn that is not among the last two, with probability
  `subagent_probability`, the root spawns one subagent, or two running side by side with probability
  `fanout_probability`. A subagent has its own prefix (one per subagent type and session, shared by
  subagents of that type, never by the root), a task prompt, and `subagent_turns` requests on
  `sub_model` built like root turns; the last ends with `end_turn`. The root's next request starts
  after the last subagent ends and carries each subagent's final output plus `subagent_result_overhead`
  tokens as its tool result. `total_tokens` is the sum of in + out over the subagent's requests.
"""

from __future__ import annotations

import math
import random
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.traces.schema import Corpus, Trace

IntRange = tuple[int, int]
FloatRange = tuple[float, float]


class SynthConfig(BaseModel):
    """Distributions of the synthetic generator (defaults: the quickstart demo corpus)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sessions: int = Field(24, ge=1)
    seed: int = 0
    block_size: int = Field(64, gt=0)
    main_model: str = "synth-main"
    sub_model: str = "synth-sub"
    max_context: int = Field(12288, gt=0, description="cap on in + out of any request")
    system_tokens: IntRange = (700, 1000)
    tool_tokens: IntRange = (400, 600)
    user_prompt_tokens: IntRange = (60, 300)
    turns: IntRange = (12, 28)
    task_tool_turns: IntRange = (3, 9)
    out_median: float = 120.0
    out_sigma: float = 0.6
    out_tokens: IntRange = (50, 400)
    tool_result_median: float = 280.0
    tool_result_sigma: float = 0.8
    tool_result_tokens: IntRange = (16, 2000)
    api_base_s: float = 0.25
    prefill_tps: float = 30000.0
    decode_tps: float = 80.0
    tool_think_median_s: float = 1.0
    tool_think_sigma: float = 0.8
    tool_think_s: FloatRange = (0.05, 20.0)
    user_think_s: FloatRange = (4.0, 30.0)
    subagent_probability: float = Field(0.1, ge=0.0, le=1.0)
    fanout_probability: float = Field(0.25, ge=0.0, le=1.0)
    subagent_types: tuple[str, ...] = ("Explore", "general-purpose")
    subagent_system_tokens: IntRange = (500, 900)
    subagent_task_tokens: IntRange = (100, 400)
    subagent_turns: IntRange = (2, 6)
    subagent_result_overhead: int = Field(30, ge=0)

    @model_validator(mode="after")
    def _ranges_ordered(self) -> SynthConfig:
        for name, value in self:
            pair = isinstance(value, tuple) and len(value) == 2 and all(isinstance(v, int | float) for v in value)
            if pair and (value[0] > value[1] or value[0] < 0):
                raise ValueError(f"{name}: expected 0 <= low <= high, got {list(value)}")
        return self


class _Context:
    """A prompt as a token count and the ids of its blocks; the last block may be partly filled."""

    def __init__(self, block_size: int, next_id: list[int]) -> None:
        self.block_size = block_size
        self.tokens = 0
        self.blocks: list[int] = []
        self._next_id = next_id  # one counter per trace: ids are local to the trace

    def fork(self) -> _Context:
        other = _Context(self.block_size, self._next_id)
        other.tokens, other.blocks = self.tokens, list(self.blocks)
        return other

    def extend(self, n: int) -> None:
        if n <= 0:
            return
        if self.tokens % self.block_size:
            self.blocks.pop()  # the partly filled block gets new content, hence a new id
        self.tokens += n
        while len(self.blocks) < math.ceil(self.tokens / self.block_size):
            self.blocks.append(self._next_id[0])
            self._next_id[0] += 1


def _lognormal(rng: random.Random, median: float, sigma: float, lo: float, hi: float) -> float:
    return min(hi, max(lo, rng.lognormvariate(math.log(median), sigma)))


def _ms(x: float) -> float:
    return round(x, 3)


class _Session:
    def __init__(self, cfg: SynthConfig, index: int) -> None:
        self.cfg = cfg
        self.rng = random.Random(f"harness-traces-synth:{cfg.seed}:{index}")
        self.trace_id = f"synth-s{cfg.seed}-{index:04d}"
        self.next_id = [0]
        self.sub_prefixes: dict[str, tuple[_Context, int, int]] = {}
        self.agent_count = 0

    def out_tokens(self) -> int:
        c = self.cfg
        return round(_lognormal(self.rng, c.out_median, c.out_sigma, *c.out_tokens))

    def tool_result(self) -> int:
        c = self.cfg
        return round(_lognormal(self.rng, c.tool_result_median, c.tool_result_sigma, *c.tool_result_tokens))

    def tool_think(self) -> float:
        c = self.cfg
        return _ms(_lognormal(self.rng, c.tool_think_median_s, c.tool_think_sigma, *c.tool_think_s))

    def user_think(self) -> float:
        return _ms(self.rng.uniform(*self.cfg.user_think_s))

    def call(self, ctx: _Context, t: float, model: str, out: int, stop: str, think: float) -> dict[str, Any]:
        c = self.cfg
        ttft = c.api_base_s + ctx.tokens / c.prefill_tps
        return {
            "t": _ms(t), "type": "s", "model": model, "in": ctx.tokens, "out": out,
            "hash_ids": list(ctx.blocks), "input_types": ["text"], "output_types": ["text"],
            "stop": stop, "api_time": _ms(ttft + out / c.decode_tps), "think_time": _ms(think),
            "ttft": _ms(ttft),
        }

    def subagent(self, t_spawn: float) -> tuple[dict[str, Any], float, int]:
        """One subagent spawned at t_spawn: (entry, end time, tokens of its final answer)."""
        c, rng = self.cfg, self.rng
        kind = c.subagent_types[rng.randrange(len(c.subagent_types))]
        if kind not in self.sub_prefixes:
            prefix = _Context(c.block_size, self.next_id)
            system = rng.randint(*c.subagent_system_tokens)
            prefix.extend(system)
            self.sub_prefixes[kind] = (prefix, system, 0)
        prefix, system, tools = self.sub_prefixes[kind]
        ctx = prefix.fork()
        ctx.extend(rng.randint(*c.subagent_task_tokens))
        self.agent_count += 1
        n_turns = rng.randint(*c.subagent_turns)
        requests: list[dict[str, Any]] = []
        t, think, out = t_spawn, 0.0, 0
        for k in range(n_turns):
            last = k == n_turns - 1
            out = self.out_tokens()
            req = self.call(ctx, t, c.sub_model, out, "end_turn" if last else "tool_use", think)
            requests.append(req)
            end = req["t"] + req["api_time"]
            if last:
                break
            ctx.extend(out)
            ctx.extend(self.tool_result())
            think = self.tool_think()
            t = end + think
        end = requests[-1]["t"] + requests[-1]["api_time"]
        entry = {
            "t": _ms(t_spawn), "type": "subagent", "agent_id": f"agent_{self.agent_count:03d}",
            "subagent_type": kind, "status": "completed",
            "duration_ms": round((end - t_spawn) * 1000),
            "total_tokens": sum(r["in"] + r["out"] for r in requests),
            "tool_use_count": sum(1 for r in requests if r["stop"] == "tool_use"),
            "models": [c.sub_model], "tool_tokens": tools, "system_tokens": system,
            "requests": requests,
        }
        return entry, end, out

    def build(self) -> Trace:
        c, rng = self.cfg, self.rng
        ctx = _Context(c.block_size, self.next_id)
        system, tools = rng.randint(*c.system_tokens), rng.randint(*c.tool_tokens)
        ctx.extend(system + tools)
        ctx.extend(rng.randint(*c.user_prompt_tokens))
        n_turns = rng.randint(*c.turns)
        task_left = rng.randint(*c.task_tool_turns)
        requests: list[dict[str, Any]] = []
        root_calls: list[dict[str, Any]] = []
        t, think = 0.0, 0.0
        for k in range(n_turns):
            last = k == n_turns - 1
            ends_task = last or task_left == 0
            out = self.out_tokens()
            if ctx.tokens + out > c.max_context:
                break
            req = self.call(ctx, t, c.main_model, out, "end_turn" if ends_task else "tool_use", think)
            requests.append(req)
            root_calls.append(req)
            end = req["t"] + req["api_time"]
            if last:
                break
            ctx.extend(out)
            if ends_task:
                task_left = rng.randint(*c.task_tool_turns)
                think = self.user_think()
                ctx.extend(rng.randint(*c.user_prompt_tokens))
            else:
                task_left -= 1
                result = self.tool_result()
                if k < n_turns - 3 and rng.random() < c.subagent_probability:
                    fan = 2 if rng.random() < c.fanout_probability else 1
                    t_spawn = _ms(end + self.tool_think())
                    result, done = 0, t_spawn
                    for _ in range(fan):
                        entry, sub_end, final_out = self.subagent(t_spawn)
                        requests.append(entry)
                        done = max(done, sub_end)
                        result += final_out + c.subagent_result_overhead
                    end = done
                ctx.extend(result)
                think = self.tool_think()
            t = end + think
        if root_calls and root_calls[-1]["stop"] != "end_turn":
            root_calls[-1]["stop"] = "end_turn"  # stopped early at the context cap: the task ends here
        raw = {
            "id": self.trace_id, "models": [c.main_model] + ([c.sub_model] if self.agent_count else []),
            "block_size": c.block_size, "hash_id_scope": "local", "tool_tokens": tools,
            "system_tokens": system, "requests": requests,
            "totals": {
                "requests": len(root_calls), "subagents": self.agent_count,
                "input_tokens": sum(r["in"] for r in root_calls),
                "output_tokens": sum(r["out"] for r in root_calls),
            },
        }
        return Trace.model_validate(raw)


def synth_trace(cfg: SynthConfig, index: int) -> Trace:
    """Session `index` of the corpus described by `cfg`."""
    return _Session(cfg, index).build()


def synth_corpus(cfg: SynthConfig) -> Corpus:
    """`cfg.sessions` synthetic sessions."""
    traces = tuple(synth_trace(cfg, i) for i in range(cfg.sessions))
    return Corpus(traces=traces, source=f"synth(seed={cfg.seed}, sessions={cfg.sessions})")

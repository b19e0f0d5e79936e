"""The Weka v1 agentic trace format as strict models.

A trace is one recorded agent session (Claude-Code style). Prompts are never stored: each request
records its token counts and the ids of the 64-token KV blocks its prompt is made of (`hash_ids`),
so a replayer can synthesize prompts with the same block-sharing structure. Times in the format are
float seconds since the session started (`t`), as recorded; the harness keeps them as given.

    Trace      id, models, block_size, hash_id_scope, tool_tokens, system_tokens, requests, totals
    request    type "n" (non-streaming) or "s" (streaming): t, model, in, out, hash_ids, input_types,
               output_types, stop, api_time, think_time (+ ttft for "s")
    subagent   type "subagent": t (spawn), agent_id, subagent_type, status, duration_ms, total_tokens,
               tool_use_count, models, tool_tokens, system_tokens, requests (nested; may nest subagents)

Inner request timestamps are absolute (seconds since the root session started), like the parent's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt, ValidationError

from harness.errors import UserError, and_more
from harness.inputs.yaml_input import short

StopReason = Literal["", "tool_use", "end_turn", "max_tokens", "stop_sequence", "pause_turn", "refusal"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class _ApiCall(_Strict):
    t: NonNegativeFloat = Field(description="request start, seconds since the session started")
    model: str = Field(min_length=1)
    input_tokens: NonNegativeInt = Field(alias="in", description="prompt tokens (the whole context)")
    output_tokens: NonNegativeInt = Field(alias="out", description="generated tokens")
    hash_ids: list[NonNegativeInt] = Field(default_factory=list, description="KV block ids of the prompt")
    input_types: list[str] = Field(default_factory=list)
    output_types: list[str] = Field(default_factory=list)
    stop: StopReason = ""
    api_time: NonNegativeFloat | None = Field(default=None, description="server time, seconds")
    think_time: NonNegativeFloat | None = Field(default=None, description="client delay before it, seconds")


class NormalRequest(_ApiCall):
    """A non-streaming API call."""

    type: Literal["n"]


class StreamingRequest(_ApiCall):
    """A streaming API call (may record its time to first token)."""

    type: Literal["s"]
    ttft: NonNegativeFloat | None = None


ApiCall: TypeAlias = NormalRequest | StreamingRequest


class Subagent(_Strict):
    """A subagent spawned by its parent at `t`, with its own (possibly nested) requests."""

    type: Literal["subagent"]
    t: NonNegativeFloat
    agent_id: str = Field(min_length=1)
    subagent_type: str
    status: str
    duration_ms: NonNegativeInt | None = None
    total_tokens: NonNegativeInt | None = None
    tool_use_count: NonNegativeInt | None = None
    models: list[str]
    tool_tokens: NonNegativeInt = 0
    system_tokens: NonNegativeInt = 0
    requests: list[Request]


Request: TypeAlias = Annotated[NormalRequest | StreamingRequest | Subagent, Field(discriminator="type")]
Subagent.model_rebuild()


class Trace(_Strict):
    """One recorded session: a root conversation plus its subagents."""

    id: str = Field(min_length=1)
    models: list[str]
    block_size: int = Field(gt=0, description="tokens per hash block")
    hash_id_scope: Literal["local", "global"]
    tool_tokens: NonNegativeInt = 0
    system_tokens: NonNegativeInt = 0
    requests: list[Request] = Field(min_length=1, description="at least one request")
    totals: dict[str, Any] | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The trace in its file form (format field names, unset optionals omitted)."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


@dataclass(frozen=True)
class Located:
    """An API call with where it sits: its index path and the subagents above it."""

    request: ApiCall
    path: tuple[int, ...]
    agents: tuple[Subagent, ...] = ()

    @property
    def depth(self) -> int:
        return len(self.agents)

    @property
    def where(self) -> str:
        return request_path(self.path)


def request_path(path: tuple[int, ...]) -> str:
    """`(3, 1)` -> `requests[3].requests[1]`."""
    return ".".join(f"requests[{i}]" for i in path)


def walk_calls(trace: Trace) -> Iterator[Located]:
    """Every API call of a trace, depth first in file order, subagents' calls included."""

    def rec(items: list[Any], prefix: tuple[int, ...], agents: tuple[Subagent, ...]) -> Iterator[Located]:
        for i, item in enumerate(items):
            if isinstance(item, Subagent):
                yield from rec(item.requests, prefix + (i,), agents + (item,))
            else:
                yield Located(item, prefix + (i,), agents)

    yield from rec(trace.requests, (), ())


def walk_subagents(trace: Trace) -> Iterator[tuple[tuple[int, ...], Subagent]]:
    """Every subagent of a trace (nested ones included) with its index path."""

    def rec(items: list[Any], prefix: tuple[int, ...]) -> Iterator[tuple[tuple[int, ...], Subagent]]:
        for i, item in enumerate(items):
            if isinstance(item, Subagent):
                yield prefix + (i,), item
                yield from rec(item.requests, prefix + (i,))

    yield from rec(trace.requests, ())


@dataclass(frozen=True)
class Corpus:
    """A set of traces with unique ids, in a stable order, and where they came from."""

    traces: tuple[Trace, ...]
    source: str = ""
    notes: tuple[str, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.traces)

    def by_id(self) -> dict[str, Trace]:
        return {t.id: t for t in self.traces}


_DISCRIMINATORS = {"n", "s", "subagent", "NormalRequest", "StreamingRequest", "Subagent"}


def error_location(loc: tuple[Any, ...]) -> str:
    """Render a pydantic error location in the file's own terms: `requests[3].requests[1].in`.

    Pydantic inserts the union tag after a list index (`requests, 3, 's', in`); the tag is dropped.
    """
    parts: list[str] = []
    prev_int = False
    for item in loc:
        if isinstance(item, int):
            if parts:
                parts[-1] = f"{parts[-1]}[{item}]"
            else:
                parts.append(f"[{item}]")
            prev_int = True
            continue
        if prev_int and item in _DISCRIMINATORS:
            prev_int = False
            continue
        parts.append(str(item))
        prev_int = False
    return ".".join(parts) or "<root>"


def trace_error_line(source: str, raw: Any, exc: ValidationError) -> str:
    """One line: `source: trace ID: requests[3].in: message (and N more: …)`."""

    errors = exc.errors()
    first = errors[0]
    tid = raw.get("id") if isinstance(raw, dict) else None
    who = f"trace {tid if len(tid) <= 80 and tid.isprintable() else short(tid)}: " if isinstance(tid, str) and tid else ""  # noqa: E501
    more = and_more([f"{error_location(tuple(e.get('loc', ())))}: {e.get('msg', 'invalid')}" for e in errors[1:]])
    msg = str(first.get("msg", "invalid"))
    if first.get("type") == "union_tag_invalid":
        msg = "type must be one of 'n', 's', 'subagent'"
    return f"{source}: {who}{error_location(tuple(first.get('loc', ())))}: {msg}{more}"


def parse_trace(raw: Any, source: str) -> Trace:
    """Validate one trace object; a mistake raises UserError with a one-line location."""

    if not isinstance(raw, dict):
        raise UserError(f"{source}: expected a JSON object (one trace), got {type(raw).__name__}")
    try:
        return Trace.model_validate(raw)
    except ValidationError as exc:
        raise UserError(trace_error_line(source, raw, exc)) from None

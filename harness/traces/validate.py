"""Checks beyond the schema: what a replayer needs to hold for a corpus to replay faithfully.

Errors make a corpus unusable: the pinned AIPerf's Weka loader aborts on them.
* A conversation's first call (the root's, each subagent's) has fewer `hash_ids` than its declared
  system + tool prefix needs (ceil((tool_tokens + system_tokens) / block_size)).
* Two subagents of one trace share an `agent_id`.

Warnings replay, but not as recorded, or not with AIPerf 0.13:
* `hash_id_scope: global` and subagents nested in subagents (the pinned AIPerf accepts neither).
* More `hash_ids` than ceil(in / block_size) (blocks beyond the prompt).
* A call that starts before the previous call of its conversation, or a subagent call before its spawn.
* A model used by a call but missing from the trace's (or subagent's) `models`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.traces.schema import ApiCall, Corpus, Subagent, Trace, request_path, walk_calls, walk_subagents


@dataclass
class CheckReport:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _conversations(trace: Trace) -> list[tuple[str, Subagent | None, list[tuple[tuple[int, ...], ApiCall]]]]:
    """(label, subagent or None for the root, its own calls with their index paths)."""
    convs: dict[tuple[int, ...], list[tuple[tuple[int, ...], ApiCall]]] = {(): []}
    owners: dict[tuple[int, ...], Subagent | None] = {(): None}
    for path, sa in walk_subagents(trace):
        convs[path] = []
        owners[path] = sa
    for located in walk_calls(trace):
        convs[located.path[:-1]].append((located.path, located.request))
    return [(request_path(p) or "root", owners[p], calls) for p, calls in convs.items()]


def check_trace(trace: Trace, where: str) -> CheckReport:
    report = CheckReport()
    bs = trace.block_size
    head = f"{where}: trace {trace.id}"
    if trace.hash_id_scope == "global":
        report.warnings.append(f"{head}: hash_id_scope: 'global' is not supported by AIPerf 0.13")
    seen_agents: dict[str, str] = {}
    for path, sa in walk_subagents(trace):
        loc = request_path(path)
        if len(path) > 1:
            report.warnings.append(f"{head}: {loc}: subagent nested in a subagent (the pinned AIPerf rejects it)")
        if sa.agent_id in seen_agents:
            report.errors.append(f"{head}: {loc}.agent_id: '{sa.agent_id}' already used by {seen_agents[sa.agent_id]}")
        seen_agents.setdefault(sa.agent_id, loc)
    for label, owner, calls in _conversations(trace):
        prefix = (owner.tool_tokens + owner.system_tokens) if owner else (trace.tool_tokens + trace.system_tokens)
        models = set(owner.models if owner else trace.models)
        prev_t: float | None = None
        for k, (path, req) in enumerate(calls):
            loc = f"{head}: {request_path(path)}"
            n_ids = len(req.hash_ids)
            need = math.ceil(prefix / bs)
            if k == 0 and n_ids < need:
                report.errors.append(f"{loc}.hash_ids: first call of {label} has {n_ids} blocks but its "
                                     f"{prefix}-token system/tool prefix needs {need}")
            if n_ids > math.ceil(req.input_tokens / bs):
                report.warnings.append(f"{loc}.hash_ids: {n_ids} blocks exceed ceil(in / {bs}) = "
                                       f"{math.ceil(req.input_tokens / bs)}")
            t = req.t
            if prev_t is not None and t < prev_t:
                report.warnings.append(f"{loc}.t: {t} is before the previous call of {label} ({prev_t})")
            if owner is not None and k == 0 and t < owner.t:
                report.warnings.append(f"{loc}.t: {t} is before its subagent's spawn ({owner.t}); "
                                       "replayers read it as relative to the spawn")
            prev_t = t
            if req.model not in models:
                report.warnings.append(f"{loc}.model: '{req.model}' is not listed in models")
    return report


def check_corpus(corpus: Corpus) -> CheckReport:
    """All errors and warnings of a corpus, each one line naming trace, request path and field."""
    report = CheckReport()
    for trace in corpus.traces:
        one = check_trace(trace, corpus.source)
        report.errors += one.errors
        report.warnings += one.warnings
    return report

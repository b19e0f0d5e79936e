"""Session stickiness: how much of each session's traffic one DP rank of one worker served.

Agentic sessions reuse their KV prefix only where their turns land on the rank that holds it, so a run
behind a router reports affinity from the workers' own logs. At SGLang's `--log-level debug` the simulator logs
one line per finished chat completion that carried a session key, `[sim] routed key=<key> rank=<dp rank>`
(`harness.sim.batching.topology.dprank`), and a deployment's simulated workers start at that level
(`harness.recipe.multinode.deployment.SIM_ROUTING_LOG`, unless a role sets `log-level`); real SGLang logs no such line,
so for it (or a simulated worker at a quieter level) the measurement is absent with a reason.

For each session key: its turns and the most of them served by one (worker, rank).
- `sticky_share` = sum over sessions of that largest count / all turns (the per-session max share,
  weighted by the session's turns);
- `fully_sticky_sessions` = share of sessions whose every turn hit one (worker, rank);
- `targets` = distinct (worker, rank) pairs that served any turn.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import unquote

ROUTED_LINE = re.compile(r"\[sim\] routed key=(\S+) rank=(\d+)")
UNMEASURED = ("stickiness_unmeasured: no routed lines in the workers' logs (real SGLang logs no routing key; "
              "the simulator logs them at --log-level debug)")


def routed_turns(worker: str, text: str) -> list[tuple[str, tuple[str, int]]]:
    """(session key, (worker, rank)) for every routed line of one worker's log text."""
    return [(unquote(m.group(1)), (worker, int(m.group(2)))) for m in ROUTED_LINE.finditer(text)]


def stickiness(worker_logs: dict[str, Path], keys: set[str] | None = None) -> dict[str, Any]:
    """Session affinity over the logs of every worker (label -> its server log), counting only the sessions in
    `keys` when given (a deployment reused across points logs every point's sessions); `reason` when
    unmeasured."""
    by_session: dict[str, Counter[tuple[str, int]]] = {}
    for worker, path in sorted(worker_logs.items()):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        for key, target in routed_turns(worker, text):
            if keys is None or key in keys:
                by_session.setdefault(key, Counter())[target] += 1
    if not by_session:
        return {"reason": UNMEASURED}
    turns = sum(sum(c.values()) for c in by_session.values())
    on_top = sum(max(c.values()) for c in by_session.values())
    fully = sum(1 for c in by_session.values() if len(c) == 1)
    targets = {t for c in by_session.values() for t in c}
    return {
        "sessions": len(by_session),
        "turns": turns,
        "sticky_share": on_top / turns,
        "fully_sticky_sessions": fully / len(by_session),
        "targets": len(targets),
    }

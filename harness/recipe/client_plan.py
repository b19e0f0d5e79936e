"""What a point's client replays: the plan's client part, which the AIPerf scenario checks read too."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# Client settings added after recipes' fingerprints were first recorded, with their unset values: they enter a
# point's settings and its plan only when set, so a recipe that does not use them keeps its fingerprint (a resumed
# sweep finds its points).
ADDED_WHEN_SET: dict[str, Any] = {"warmup_requests_per_lane": None, "burst_phase_starts": False, "workers": None,
                                  "record_processors": None}


def drop_unset_additions(client: dict[str, Any]) -> dict[str, Any]:
    """`client` (a dump of the recipe's client or of a ClientPlan) without the added settings left unset."""
    return {k: v for k, v in client.items() if not (k in ADDED_WHEN_SET and v == ADDED_WHEN_SET[k])}


class ClientPlan(Frozen):
    """What the AIPerf client replays and for how long (argv is rendered at run time: it needs the URL)."""

    served_model_name: str
    scenario: str                       # the AIPerf scenario: `agentx` or `inferencex-agentx-mvp`
    traces: str
    conc: int
    duration_s: float
    grace_s: float
    warmup_s: float
    warmup_requests_per_lane: int | None = None   # None: the scenario's own
    burst_phase_starts: bool = False    # every lane's first call of the window at once, not at its recorded spacing
    workers: int | None = None          # AIPerf's worker processes; None: AIPerf's own count
    record_processors: int | None = None   # AIPerf's record processor services; None: AIPerf's own count
    seed: int
    tokenizer: str | None
    max_sessions: int | None
    unofficial: bool = False            # AIPerf runs with --unsafe-override (run marked submission_valid: false)
    corpus_cache: str | None = None     # the datasets cache holding the staged pinned corpus (set by preflight)

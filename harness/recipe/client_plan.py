"""What a point's client replays: the plan's client part, which the AIPerf scenario checks read too."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ClientPlan(Frozen):
    """What the AIPerf client replays and for how long (argv is rendered at run time: it needs the URL)."""

    served_model_name: str
    scenario: str                       # the AIPerf scenario: `agentx` or `inferencex-agentx-mvp`
    traces: str
    concurrency: int
    duration_s: float
    grace_s: float
    warmup_s: float
    seed: int
    tokenizer: str | None
    max_sessions: int | None
    unofficial: bool = False            # AIPerf runs with --unsafe-override (run marked submission_valid: false)
    corpus_cache: str | None = None     # the datasets cache holding the staged pinned corpus (set by preflight)

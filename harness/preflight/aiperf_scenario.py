"""AIPerf's own check of every point's client command, before any server starts.

Each point's exact `aiperf profile` argv (with a placeholder URL, tokenizer and artifact directory) goes
through AIPerf's configuration and scenario resolution (`harness.recipe.scenario.resolve`): whatever AIPerf
would refuse at minute 0 of the job is a failed finding here. Points whose argv differ only in their
concurrency are resolved once per distinct command, and a command resolved before by the same client version is
read from the cache (`harness.preflight.scenario_cache`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from harness.errors import UserError
from harness.point.replay.aiperf import build_argv
from harness.preflight.checks import Finding, Level
from harness.preflight.scenario_cache import kept_resolve
from harness.recipe.plan import PointPlan
from harness.recipe.scenario import Resolution, resolve
from harness.traces.pinned import is_pinned_spec

PLACEHOLDER_URL = "http://127.0.0.1:30000"
PLACEHOLDER_TOKENIZER = "local/tokenizer"


def client_argv(plan: PointPlan, scratch: Path) -> list[str]:
    """The point's `aiperf profile` arguments as AIPerf will get them (after `aiperf profile`)."""

    client = plan.client
    if not is_pinned_spec(client.traces) and not Path(client.traces).exists():
        client = client.model_copy(update={"traces": str(scratch)})  # converted to a directory at run time
    return build_argv(client, PLACEHOLDER_URL, scratch / "artifacts", PLACEHOLDER_TOKENIZER, executable="aiperf")[2:]


def resolutions(plans: list[PointPlan]) -> dict[str, Resolution]:
    """AIPerf's resolution of each point's client command, by point name."""
    out: dict[str, Resolution] = {}
    seen: dict[tuple[str, ...], Resolution] = {}
    with tempfile.TemporaryDirectory(prefix="hx-aiperf-check-") as tmp:
        for plan in plans:
            argv = client_argv(plan, Path(tmp))
            key = tuple(tok for i, tok in enumerate(argv) if i == 0 or argv[i - 1] != "--concurrency")
            if key not in seen:
                seen[key] = kept_resolve(argv, tmp, resolve)
            out[plan.name] = seen[key]
    return out


def findings(plans: list[PointPlan], recipe_src: str) -> list[Finding]:
    """One finding per distinct outcome: AIPerf refuses, accepts as unofficial, or accepts as a submission."""
    where = f"{recipe_src}:client"
    by_text: dict[tuple[Level, str], list[str]] = {}
    scenario_of = {p.name: p.client.scenario for p in plans}
    for name, res in resolutions(plans).items():
        by_text.setdefault(_outcome(res, scenario_of[name]), []).append(name)
    return [Finding(level, "aiperf", where, f"{', '.join(names)}: {text}") for (level, text), names in by_text.items()]


def refuse_unless_accepted(plans: list[PointPlan], recipe_src: str) -> None:
    """A UserError (exit 2) naming AIPerf's refusal when AIPerf would not start some point's client."""

    failed = [f for f in findings(plans, recipe_src) if f.level == "fail"]
    if failed:
        raise UserError(f"{failed[0].where}: {failed[0].message}")


def _outcome(res: Resolution, scenario: str) -> tuple[Level, str]:
    if not res.accepted:
        hint = ("; mark the run unofficial (--unofficial) for a smoke run" if res.violations else "")
        return "fail", f"AIPerf refuses this client command: {res.error}{hint}"
    if res.submission_valid is False:
        broken = "; ".join(v.line() for v in res.violations) or "override active"
        return "warn", f"unofficial: AIPerf runs it with --unsafe-override and records submission_valid false " \
                       f"({broken})"
    return "pass", f"AIPerf's {scenario} scenario accepts it as a submission"

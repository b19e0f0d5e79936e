"""Shared ways rules gather evidence: forbidden settings at any level, grouping points with one message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from harness.check.model import CheckedRecipe, Finding, PlannedPoint, Status, fmt_value, short_error


def forbidden_settings(recipe: CheckedRecipe, plans: list[PlannedPoint], kind: Literal["args", "env"],
                       forbidden: Callable[[str], str | None]) -> list[Finding]:
    """FAIL findings for every point whose effective settings contain a forbidden key, naming where the
    point inherits it from, plus any level of the recipe that writes it without reaching a point.

    `forbidden(key)` is None for an allowed key, else why it is forbidden ("" when the rule says it all).
    """
    findings: list[Finding] = []
    reached: set[tuple[str, str]] = set()
    for pp in plans:
        mapping = pp.args if kind == "args" else pp.env
        for key, value in mapping.items():
            why = forbidden(key)
            if why is None:
                continue
            chain = recipe.arg_origin(pp.name, key) if kind == "args" else recipe.env_origin(pp.name, key)
            reached.add((chain[-1], key))
            text = f"{recipe.label(chain)}: {key}={fmt_value(value)}" + (f" ({why})" if why else "")
            findings.append(Finding("FAIL", with_planner(recipe, pp, text, key), pp.name))
    if kind == "env":
        for pp in plans:
            for role, env in role_envs(pp):
                for key, value in env.items():
                    why = forbidden(key)
                    if why is not None and key not in pp.env:
                        text = f"{pp.name} ({role} workers): {key}={fmt_value(value)}" + (f" ({why})" if why else "")
                        findings.append(Finding("FAIL", text, pp.name))
    for level, raw_key, value in recipe.written_levels(kind):
        key = recipe.canonical(raw_key) if kind == "args" else raw_key
        if forbidden(key) is not None and (level, key) not in reached:
            findings.append(Finding("FAIL", f"{level}: {key}={fmt_value(value)} (written in the recipe, "
                                            f"removed again by every point that inherits it)",
                                    None if level == "base" else level))
    return findings


def role_envs(pp: PlannedPoint) -> list[tuple[str, dict[str, str]]]:
    """(role, environment) of every worker role of a point with a deployment (the point's own `env` holds only
    the settings every role shares); empty for a single server or a point that did not plan."""
    deployment = None if pp.plan is None else pp.plan.deployment
    return [] if deployment is None else [(r.role, r.env) for r in deployment.roles]


def with_planner(recipe: CheckedRecipe, pp: PlannedPoint, text: str, key: str) -> str:
    """Evidence text, plus the planner's message when the point did not plan because of `key`."""
    if pp.error and key.lstrip("-") in pp.error:
        return f"{text} [planner: {short_error(pp.error, recipe.source)}]"
    return text


def grouped(status: Status, by_point: dict[str, str]) -> list[Finding]:
    """One finding per distinct message, naming every point that has it (`c1, c5, c8: message`)."""
    groups: dict[str, list[str]] = {}
    for point, message in by_point.items():
        groups.setdefault(message, []).append(point)
    return [Finding(status, f"{', '.join(points)}: {message}", points[0] if len(points) == 1 else None)
            for message, points in groups.items()]


def point_names(plans: list[PlannedPoint]) -> str:
    return ", ".join(pp.name for pp in plans)

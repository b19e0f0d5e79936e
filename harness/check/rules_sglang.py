"""`sglang-hooks`: SGLang's own code judges every planned point's server command.

Each planned point's server argv goes through the real argument parser, `ServerArgs` construction and the
resolution hooks that need no GPU, of the recipe's pinned `server.sglang_version` (`tools/sglang_judge.py
--argv-json`, run once per recipe in a process of its own with this interpreter, so SGLang's import stand-ins never
enter the harness). It reads the unpacked wheel `$HARNESS_SGLANG_WHEELS/<version>` (default
`$HARNESS_SGLANG_HOME/wheels`, as `bash tools/sglang-cpu-setup.sh` lays it out); without the wheel or the tool
(a harness installed without its repository) the rule is N/A and says how to enable it.

Which recipes: those whose server command carries SGLang's flags, that is `engine: sglang` and `engine: sim` (the
simulator parses the same flags with the pinned table; only its own flags, from `--sim-profile` on, are left
out), because a simulated curve stands for an SGLang configuration that SGLang must accept. Points that do not
plan are the `plannable` rule's business. A hook that reads the model's config stops there (the server judges the
rest at start-up); the PASS line counts those points.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import harness
from harness.check.model import CheckedRecipe, Finding, PlannedPoint
from harness.check.rule import Rule
from harness.recipe.plan import PointPlan

TOOL = Path(harness.__file__).resolve().parents[1] / "tools" / "sglang_judge.py"
SETUP = "bash tools/sglang-cpu-setup.sh"
TIMEOUT_S = 300
SGLANG_ARGV_ENGINES = ("sglang", "sim")


@dataclass(frozen=True)
class SGLangReply:
    """SGLang's word on one point: its rejection and the hook that raised it (None: accepted), and the first
    hook that stopped on the model's config."""

    label: str
    sglang: str | None
    sglang_rule: str | None
    needs_model: str | None


class JudgeFailed(Exception):
    """The judging process did not answer (timeout, crash, unreadable output); the message says why."""


Judge = Callable[[str, Path, list[tuple[str, list[str]]]], list[SGLangReply]]


def wheels_dir() -> Path:
    """Where unpacked sglang wheels live, one directory per version."""
    given = os.environ.get("HARNESS_SGLANG_WHEELS")
    if given:
        return Path(given)
    home = os.environ.get("HARNESS_SGLANG_HOME") or Path.home() / ".cache" / "harness" / "sglang-cpu"
    return Path(home) / "wheels"


def wheel_of(version: str) -> Path | None:
    """The unpacked sglang wheel of `version`, or None."""
    root = wheels_dir() / version
    return root if (root / "sglang" / "srt" / "server_args.py").is_file() else None


def sglang_flags(command: list[str]) -> list[str]:
    """The SGLang flags of a server command: without `python3 -m MODULE`, and without the simulator's own flags
    (`--sim-profile` and after)."""
    argv = list(command[3:])
    return argv[: argv.index("--sim-profile")] if "--sim-profile" in argv else argv


def server_argv(plan: PointPlan) -> list[str]:
    """The SGLang flags of a plan's one server."""
    return sglang_flags(plan.server.argv)


def judged_commands(name: str, plan: PointPlan) -> list[tuple[str, list[str]]]:
    """(label, SGLang flags) to judge for a point: its server's, or one per role of its deployment (the role's
    first worker on its leader node; the router is not SGLang's server), labelled `cN.prefill`."""
    if plan.deployment is None:
        return [(name, server_argv(plan))]
    return [(f"{name}.{role.role}", sglang_flags(role.worker_plans[0].nodes[0].argv))
            for role in plan.deployment.roles]


def run_judge(version: str, wheel: Path, items: list[tuple[str, list[str]]]) -> list[SGLangReply]:
    """SGLang `version`'s reply on each (label, argv), from `tools/sglang_judge.py --argv-json -`."""
    payload = json.dumps([{"label": label, "argv": argv} for label, argv in items])
    try:
        proc = subprocess.run([sys.executable, str(TOOL), version, "--wheel-dir", str(wheel), "--argv-json", "-"],
                              input=payload, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise JudgeFailed(f"SGLang {version}'s hooks did not answer within {TIMEOUT_S} s ({TOOL.name})") from None
    said = [line for line in proc.stderr.splitlines() if line.strip()]
    last = said[-1].strip() if said else "no message"
    if proc.returncode != 0:
        raise JudgeFailed(f"{TOOL.name} failed (exit {proc.returncode}): {last}")
    try:
        rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        replies = [SGLangReply(str(r["label"]), r["sglang"], r["sglang_rule"], r["needs_model"]) for r in rows]
    except (ValueError, KeyError, TypeError) as exc:
        raise JudgeFailed(f"{TOOL.name} gave unreadable output ({exc}): {last}") from None
    if [v.label for v in replies] != [label for label, _ in items]:
        raise JudgeFailed(f"{TOOL.name} judged {len(replies)} of {len(items)} points: {last}")
    return replies


def findings(version: str, replies: list[SGLangReply]) -> list[Finding]:
    """FAIL per point SGLang refuses (`c24: SGLang 0.5.23 refuses: MESSAGE (HOOK)`), else one PASS line."""
    refused = [Finding("FAIL", f"{v.label}: SGLang {version} refuses: {v.sglang} ({v.sglang_rule})", v.label)
               for v in replies if v.sglang is not None]
    if refused:
        return refused
    stopped = sum(v.needs_model is not None for v in replies)
    what = "server commands (each deployment role's)" if any("." in v.label for v in replies) else "points"
    text = f"SGLang {version} accepts all {len(replies)} {what}"
    if stopped:
        text += (f" ({stopped} stopped at a hook that reads the model's config; "
                 "the server judges the rest at start-up)")
    return [Finding("PASS", text)]


class SglangHooks(Rule):
    id: ClassVar[str] = "sglang-hooks"
    rationale: ClassVar[str] = ("SGLang's own parser, ServerArgs and GPU-free resolution hooks of the pinned version "
                                "must accept every planned point's server command (N/A without the unpacked wheel)")

    def __init__(self, judge: Judge = run_judge) -> None:
        self.judge = judge

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        r = recipe.recipe
        if r.engine not in SGLANG_ARGV_ENGINES:
            return [Finding("N/A", f"engine {r.engine}: the server command is not SGLang's")]
        planned = [item for pp in plans if pp.plan is not None for item in judged_commands(pp.name, pp.plan)]
        if not planned:
            return [Finding("N/A", "no point plans (see plannable)")]
        version = r.server.sglang_version
        wheel = wheel_of(version)
        if wheel is None or not TOOL.is_file():
            missing = f"no unpacked SGLang {version} wheel under {wheels_dir()}" if wheel is None \
                else f"{TOOL} is not here (a harness installed without its repository)"
            return [Finding("N/A", f"not judged by SGLang: {missing}; `{SETUP}` installs 0.5.20 and 0.5.23 "
                                   "(HARNESS_SGLANG_WHEELS=DIR points at DIR/<version>)")]
        try:
            replies = self.judge(version, wheel, planned)
        except JudgeFailed as exc:
            return [Finding("WARN", f"not judged by SGLang: {exc}")]
        return findings(version, replies)

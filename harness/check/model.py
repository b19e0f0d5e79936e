"""What a review rule sees and what it says.

A rule looks at a `CheckedRecipe` (the validated recipe, its flag table and where every setting comes from)
and its `PlannedPoint`s (each point's effective settings, and its plan or the planner's message when the
point does not plan), and returns `Finding`s. A rule's status is the worst status among its findings:
FAIL > WARN > PASS > N/A.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from harness.errors import UserError
from harness.recipe.plan import PointPlan
from harness.recipe.schema import ArgValue, Point, Recipe
from harness.recipe.server_flags.flags import FlagTable
from harness.recipe.server_flags.server_args import structured_args

_POINT = re.compile(r"^c\d+$")
Status = Literal["PASS", "FAIL", "WARN", "N/A"]
SEVERITY: dict[str, int] = {"N/A": 0, "PASS": 1, "WARN": 2, "FAIL": 3}

# Structured recipe blocks that render SGLang flags, for naming where an inherited flag comes from.
_BLOCK_OF_FLAG = {
    "--model-path": "model.path", "--served-model-name": "model.served_name", "--revision": "model.revision",
    "--chat-template": "model.chat_template", "--tp-size": "parallelism.tp", "--ep-size": "parallelism.ep",
    "--pp-size": "parallelism.pp",
}


@dataclass(frozen=True)
class Finding:
    """One piece of evidence: its status, the point it is about (None: the whole recipe) and the text."""

    status: Status
    evidence: str
    point: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "point": self.point, "evidence": self.evidence}


def worst(statuses: list[Status]) -> Status:
    """The most severe status; N/A when there is none."""
    return max(statuses, key=lambda s: SEVERITY[s], default="N/A")


def dashed(name: str) -> str:
    name = str(name).strip()
    return name if name.startswith("-") else f"--{name}"


@dataclass(frozen=True)
class PlannedPoint:
    """One point as the rules see it.

    `args` are the effective server flags (structured blocks + base args + inherited and own point changes)
    keyed by canonical flag spelling (`--max-running-requests`). `plan` is None when planning failed, and
    `error` then holds the planner's message.
    """

    point: Point
    args: dict[str, ArgValue]
    plan: PointPlan | None = None
    error: str | None = None

    @property
    def name(self) -> str:
        return self.point.name

    @property
    def env(self) -> dict[str, str]:
        return self.point.env


@dataclass
class CheckedRecipe:
    """A validated recipe plus what rules need to name the origin of a setting."""

    recipe: Recipe
    source: str
    table: FlagTable | None
    table_error: str | None = None
    _canon_cache: dict[str, str] = field(default_factory=dict)

    def canonical(self, name: str) -> str:
        """The canonical `--flag` spelling `name` selects in the pinned table; the dashed name if none does."""
        key = dashed(name)
        if key not in self._canon_cache:
            resolved = key
            if self.table is not None:
                try:
                    resolved = self.table.resolve(key).name
                except UserError:
                    resolved = key
            self._canon_cache[key] = resolved
        return self._canon_cache[key]

    def canonical_args(self, args: dict[str, Any]) -> dict[str, Any]:
        return {self.canonical(k): v for k, v in args.items()}

    def _point_spec(self, name: str) -> Any:
        return getattr(self.recipe, "points", {}).get(name)

    def arg_origin(self, point: str, flag: str) -> list[str]:
        """Where `flag` of `point` is set: [point, ancestors walked..., level that sets it]."""
        return self._origin(point, flag, "args")

    def env_origin(self, point: str, name: str) -> list[str]:
        return self._origin(point, name, "env")

    def _origin(self, point: str, key: str, kind: Literal["args", "env"]) -> list[str]:
        def sets(mapping: dict[str, Any]) -> bool:
            if kind == "env":
                return key in mapping
            return any(self.canonical(k) == key for k in mapping)

        zipped = self.recipe.zip
        zip_concs = {f"c{c}" for c in zipped.conc} if zipped is not None else set()
        chain, name, seen = [point], point, set()
        while name not in seen:
            seen.add(name)
            spec = self._point_spec(name)
            if spec is not None and sets(getattr(spec, kind)):
                return chain
            if zipped is not None and name in zip_concs and sets(getattr(zipped, kind)):
                return [*chain, "zip"]
            if spec is None or spec.extends is None:
                break
            name = spec.extends
            chain.append(name)
        if sets(getattr(self.recipe.server, kind)):
            return [*chain, "base"]
        if kind == "args" and key in self.canonical_args(structured_args(self.recipe)):
            block = _BLOCK_OF_FLAG.get(key)
            if block is None:
                block = "speculative" if key.startswith("--speculative-") else "kv_offload"
            return [*chain, block]
        return chain

    @staticmethod
    def label(chain: list[str]) -> str:
        """`c28 (inherits from c24 ← base)`; `c8 (from zip)`; just `c28` when the point sets it itself."""
        if len(chain) <= 1:
            return chain[0]
        if len(chain) == 2 and chain[1] != "base" and not _POINT.match(chain[1]):
            return f"{chain[0]} (from {chain[1]})"
        return f"{chain[0]} (inherits from {' ← '.join(chain[1:])})"

    def where_arg(self, point: str, flag: str) -> str:
        return self.label(self.arg_origin(point, flag))

    def where_env(self, point: str, name: str) -> str:
        return self.label(self.env_origin(point, name))

    def written_levels(self, kind: Literal["args", "env"]) -> list[tuple[str, str, Any]]:
        """Every (level, key, value) the recipe writes with a value: `base`, `zip`, then each point."""
        out: list[tuple[str, str, Any]] = []
        for key, value in getattr(self.recipe.server, kind).items():
            out.append(("base", key, value))
        zipped = self.recipe.zip
        if zipped is not None:
            for key, values in getattr(zipped, kind).items():
                out.append(("zip", key, values))
        for name, spec in getattr(self.recipe, "points", {}).items():
            for key, value in getattr(spec, kind).items():
                if value is not None:
                    out.append((name, key, value))
        return out


def fmt_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def short_error(message: str, source: str) -> str:
    """A planner message without the leading `file: ` (the report already names the file)."""
    prefix = f"{source}: "
    return message.removeprefix(prefix)

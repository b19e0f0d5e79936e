"""What changed between two versions of a recipe, point by point, in the words engineers use.

    image: lmsysorg/sglang:A → lmsysorg/sglang:B
    base: stream-interval 10 → 20
    c10: max-running-requests 10 → 3, cuda-graph-max-bs-decode 10 → 3
    c16: removed
    c28 (new), starting from the c24 settings: hicache-size 120 → 160, hicache-write-policy write_through → write_back

Points are compared by their effective settings (structured blocks rendered to flags, inheritance
resolved). A change the base explains (the same key going the same way at the base and at the point) is
listed once under `base`, not under every point. A new point is described against an old point: the
nearest ancestor in its `extends` chain that the old recipe has, else the old point whose settings differ
least (ties: the closest concurrency, then the lower one). A secret (`env HF_TOKEN`, `api-key`) that changed
is listed with `<redacted>` for both values.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.errors import UserError
from harness.inputs.yaml_input import decode, read_text
from harness.recipe.load import expand_points, parse_recipe_text
from harness.recipe.plan import client_traces
from harness.recipe.schema import Point, Recipe
from harness.recipe.server_flags.server_args import structured_args
from harness.redact import REDACTED, is_secret_name

UNSET = object()


class Change(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    key: str
    old: Any = None
    new: Any = None
    old_set: bool = True
    new_set: bool = True

    def words(self) -> str:
        return f"{self.key} {_show(self.old) if self.old_set else 'unset'} → {_show(self.new) if self.new_set else 'unset'}"


class PointDiff(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    status: str  # "changed", "new", "removed", "unchanged"
    starting_from: str | None = None
    changes: list[Change] = []


class RecipeDiff(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    old_source: str
    new_source: str
    recipe: list[Change]
    base: list[Change]
    points: list[PointDiff]

    def render(self) -> str:
        """Markdown bullet list, ready to paste into a pull request."""
        lines = [f"Recipe changes ({self.old_source} → {self.new_source}):"]
        lines += [f"- {c.words().replace(' ', ': ', 1)}" for c in self.recipe]
        if self.base:
            lines.append(f"- base: {', '.join(c.words() for c in self.base)}")
        unchanged = [p.name for p in self.points if p.status == "unchanged"]
        for p in self.points:
            if p.status == "removed":
                lines.append(f"- {p.name}: removed")
            elif p.status == "new":
                start = f", starting from the {p.starting_from} settings" if p.starting_from else ""
                what = ", ".join(c.words() for c in p.changes) or "same settings"
                lines.append(f"- {p.name} (new){start}: {what}")
            elif p.status == "changed":
                lines.append(f"- {p.name}: {', '.join(c.words() for c in p.changes)}")
        if unchanged:
            lines.append(f"- unchanged: {', '.join(unchanged)}")
        if len(lines) == 1:
            lines.append("- no changes")
        return "\n".join(lines) + "\n"


def _show(value: Any) -> str:
    if value is True:
        return "on"
    if value is False:
        return "off"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return str(value)


def read_recipe_text(spec: str, cwd: Path | None = None) -> tuple[str, str]:
    """(text, source) of `path` or `REV:path` (read with `git show`, path relative to the current directory)."""
    path = Path(spec)
    if path.exists():
        return read_text(path, "recipe"), spec
    if ":" not in spec:
        raise UserError(f"{spec}: no such recipe file (give a path or REV:path)")
    rev, _, rel = spec.partition(":")
    target = rel if rel.startswith(("./", "../", "/")) else f"./{rel}"
    proc = subprocess.run(["git", "show", f"{rev}:{target}"], check=False, capture_output=True, cwd=cwd)
    if proc.returncode != 0:
        reason = (proc.stderr.decode(errors="replace").strip().splitlines() or ["git show failed"])[-1]
        raise UserError(f"{spec}: cannot read it from git: {reason}")
    return decode(proc.stdout, spec), spec


def _flat(recipe: Recipe, point: Point | None) -> dict[str, Any]:
    """Effective settings as one flat mapping: flags by name, `env NAME`, and a few recipe keys."""
    args = structured_args(recipe, None if point is None else point.kv_offload)
    out: dict[str, Any] = {**args, **(recipe.server.args if point is None else point.args)}
    env = recipe.server.env if point is None else point.env
    out.update({f"env {k}": v for k, v in env.items()})
    return out


def _recipe_keys(recipe: Recipe) -> dict[str, Any]:
    c = recipe.client
    keys = {"image": recipe.image, "engine": recipe.engine, "sglang_version": recipe.server.sglang_version,
            "precision": recipe.model.precision, "golden_key": recipe.model.golden_key,
            "chat_template": recipe.model.chat_template, "gpu": recipe.hardware.gpu,
            "infmax_model_prefix": recipe.infmax_model_prefix,
            "client.traces": client_traces(recipe), "client.duration_s": c.duration_s,
            "client.warmup_s": c.warmup_s, "client.warmup_requests_per_lane": c.warmup_requests_per_lane,
            "client.burst_phase_starts": c.burst_phase_starts, "client.workers": c.workers,
            "client.record_processors": c.record_processors,
            "client.grace_s": c.grace_s, "client.seed": c.seed,
            "client.tokenizer": c.tokenizer, "client.max_sessions": c.max_sessions}
    spec = recipe.speculative
    if spec is not None and spec.golden is not None:
        keys.update({"speculative.golden": f"{spec.golden.curve}/{spec.golden.thinking}",
                     "speculative.mode": spec.mode})
    return keys


def _changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    keys = [*new, *(k for k in old if k not in new)]
    out = []
    for key in keys:
        a, b = old.get(key, UNSET), new.get(key, UNSET)
        if a != b or isinstance(a, bool) != isinstance(b, bool):
            if is_secret_name(key.split()[-1]):  # that it changed is news; its values are not shown
                a, b = (v if v is UNSET or v is None else REDACTED for v in (a, b))
            out.append(Change(key=key, old=None if a is UNSET else a, new=None if b is UNSET else b,
                              old_set=a is not UNSET, new_set=b is not UNSET))
    return out


def _explained(change: Change, base: dict[str, Change]) -> bool:
    b = base.get(change.key)
    return b is not None and (b.old, b.new, b.old_set, b.new_set) == (change.old, change.new, change.old_set,
                                                                       change.new_set)


def diff_recipes(old: Recipe, new: Recipe, old_source: str = "old", new_source: str = "new") -> RecipeDiff:
    """The per-point change list between two recipes."""
    base = _changes(_flat(old, None), _flat(new, None))
    by_key = {c.key: c for c in base}
    old_points = {p.name: p for p in expand_points(old, old_source)}
    new_points = {p.name: p for p in expand_points(new, new_source)}
    old_flat = {n: _flat(old, p) for n, p in old_points.items()}
    diffs: list[PointDiff] = []
    for name in sorted({*old_points, *new_points}, key=lambda n: int(n[1:])):
        if name not in new_points:
            diffs.append(PointDiff(name=name, status="removed"))
            continue
        flat = _flat(new, new_points[name])
        if name in old_points:
            changes = [c for c in _changes(old_flat[name], flat) if not _explained(c, by_key)]
            diffs.append(PointDiff(name=name, status="changed" if changes else "unchanged", changes=changes))
            continue
        start = _starting_point(new_points[name], flat, old_flat)
        changes = [] if start is None else [c for c in _changes(old_flat[start], flat) if not _explained(c, by_key)]
        diffs.append(PointDiff(name=name, status="new", starting_from=start, changes=changes))
    return RecipeDiff(old_source=old_source, new_source=new_source,
                      recipe=_changes(_recipe_keys(old), _recipe_keys(new)), base=base, points=diffs)


def _starting_point(point: Point, flat: dict[str, Any], old_flat: dict[str, dict[str, Any]]) -> str | None:
    for ancestor in reversed(point.extends_chain):
        if ancestor in old_flat:
            return ancestor
    if not old_flat:
        return None
    return min(old_flat, key=lambda n: (len(_changes(old_flat[n], flat)), abs(int(n[1:]) - point.conc), int(n[1:])))


def diff_specs(old_spec: str, new_spec: str) -> RecipeDiff:
    """Diff two recipes given as paths or `REV:path`."""
    old_text, old_source = read_recipe_text(old_spec)
    new_text, new_source = read_recipe_text(new_spec)
    return diff_recipes(parse_recipe_text(old_text, old_source), parse_recipe_text(new_text, new_source),
                        old_source, new_source)

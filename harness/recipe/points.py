"""From a recipe file to validated point plans, with `--set` overrides applied: the shared front half
of `harness run`, `harness sweep` and `harness plan`.

`--set KEY=VALUE` changes one setting before planning (the hand-tuning path). Recipe keys change the
whole recipe (`engine=sim`, `client.duration_s=20`, `parallelism.tp=8`, `server.args.stream-interval=10`).
`args.<flag>=V` and `env.<NAME>=V` change the selected points only (`args.<flag>=null` removes a flag);
a flag that a structured block renders is routed to that block, so `args.hicache-size=160` changes the
points' KV offload and `args.tp-size=8` sets `parallelism.tp`. Values are parsed as YAML scalars
(`160` is an int, `true` a bool); env values stay text.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.errors import UserError, did_you_mean
from harness.inputs.yaml_input import MAX_INT_DIGITS, load_yaml, short
from harness.recipe.load import expand_points, load_recipe, parse_recipe, select_points
from harness.recipe.plan import PointPlan, build_plans
from harness.recipe.schema import OWNED_FLAGS, KvOffload, Point, Recipe
from harness.recipe.server_flags import flags

_INTEGER = re.compile(r"[-+]?[0-9][0-9_]*")  # what YAML reads as a decimal integer
_FREE_MAPPINGS = {("server", "args"), ("server", "env"), ("sim_args",)}  # recipe mappings that take new keys


def parse_override(text: str) -> tuple[list[str], Any]:
    """`KEY=VALUE` -> (key path, value)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise UserError(f"--set {short(text)}: expected SETTING=VALUE, e.g. args.max-running-requests=64")
    if key.startswith(("args.", "env.", "server.args.", "server.env.")):
        head, _, name = _split_free(key)
        path = [*head.split("."), name]
    else:
        path = key.split(".")
    if any(not part for part in path):
        raise UserError(f"--set {short(text)}: empty key part in {key!r}")
    digits = sum(ch.isdigit() for ch in value)
    if _INTEGER.fullmatch(value.strip()) and digits > MAX_INT_DIGITS:
        raise UserError(f"--set {short(text)}: an integer of {digits} digits (at most {MAX_INT_DIGITS})")
    try:
        parsed = load_yaml(value, "--set")[0] if value != "" else ""
    except UserError:  # not YAML (or beyond its bounds): the text itself
        parsed = value
    if path[-2:-1] == ["env"] and parsed is not None:
        parsed = value
    return path, parsed


def _split_free(key: str) -> tuple[str, str, str]:
    """`server.args.hicache-size` -> ("server.args", ".", "hicache-size"): flag names may contain dots."""
    for head in ("server.args", "server.env", "args", "env"):
        if key.startswith(head + "."):
            return head, ".", key[len(head) + 1:]
    raise AssertionError(key)


def _canonical(recipe: Recipe, flag: str, text: str) -> str:
    """The canonical dashless name of `flag` in the recipe's pinned flag table."""

    try:
        return flags.load_table(recipe.server.sglang_version).resolve(flag).name[2:]
    except UserError as exc:
        raise UserError(f"--set {short(text)}: {exc}") from None


_KV_FIELDS = {"enable-hierarchical-cache": "kind", "hicache-size": "hicache_size_gb",
              "hicache-write-policy": "write_policy"}


def _route(recipe: Recipe, overrides: list[str]) -> tuple[list[tuple[list[str], Any, str]], list[tuple[str, str, Any, str]]]:
    """Split overrides into recipe-level ones (path, value) and point-level ones (kind, name, value)."""
    recipe_level: list[tuple[list[str], Any, str]] = []
    point_level: list[tuple[str, str, Any, str]] = []
    for text in overrides:
        path, value = parse_override(text)
        if path[0] == "env" and len(path) == 2:
            point_level.append(("env", path[1], value, text))
        elif path[0] == "args" and len(path) == 2:
            name = _canonical(recipe, path[1], text)
            owned = name if name in OWNED_FLAGS else None
            if owned in _KV_FIELDS:
                if owned == "enable-hierarchical-cache":
                    value = "dram" if value else "none"
                point_level.append(("kv", _KV_FIELDS[owned], value, text))
            elif owned is not None:
                target = OWNED_FLAGS[owned]
                if target.startswith("("):
                    raise UserError(f"--set {short(text)}: --{owned} is {target.strip('()')}")
                recipe_level.append((target.split("."), value, text))
            else:
                point_level.append(("args", name, value, text))
        else:
            recipe_level.append((path, value, text))
    return recipe_level, point_level


def _set_recipe(raw: dict[str, Any], path: list[str], value: Any, text: str) -> None:
    node = raw
    for i, part in enumerate(path[:-1]):
        child = node.get(part)
        if child is None and part in set(Recipe.model_fields) | _section_fields(path[:i]):
            child = node[part] = {}
        if not isinstance(child, dict):
            raise UserError(f"--set {short(text)}: {'.'.join(path)} is not a recipe setting"
                            + did_you_mean(part, [*node, *(Recipe.model_fields if i == 0 else ())]))
        node = child
    if path[-1] not in node and tuple(path[:-1]) not in _FREE_MAPPINGS:
        known = [*node, *(Recipe.model_fields if len(path) == 1 else _section_fields(path[:-1]))]
        raise UserError(f"--set {short(text)}: {'.'.join(path)} is not a recipe setting"
                        + did_you_mean(path[-1], known))
    if value is None and tuple(path[:-1]) in _FREE_MAPPINGS:
        node.pop(path[-1], None)
    else:
        node[path[-1]] = value


def _section_fields(prefix: list[str]) -> set[str]:
    return {"golden"} if prefix == ["speculative"] else set()


def apply_overrides(recipe: Recipe, names: list[str] | None, overrides: list[str], source: str,
                    ) -> tuple[Recipe, list[Point]]:
    """The recipe with recipe-level `--set`s applied and the selected points with point-level ones."""
    recipe_level, point_level = _route(recipe, overrides)
    if recipe_level:
        raw = recipe.model_dump(mode="json")
        for path, value, text in recipe_level:
            _set_recipe(raw, path, value, text)
        recipe = parse_recipe(raw, source=f"{source} (with --set)")
    points = select_points(expand_points(recipe, source), names, source)
    if not point_level:
        return recipe, points
    out = []
    for p in points:
        args: dict[str, Any] = dict(p.args)
        env: dict[str, Any] = dict(p.env)
        kv: dict[str, Any] = p.kv_offload.model_dump()
        for kind, name, value, _text in point_level:
            if kind == "kv":
                kv[name] = value
                if name == "kind" and value == "none":
                    kv.update(hicache_size_gb=None, write_policy=None)
                continue
            target = args if kind == "args" else env
            if value is None:
                target.pop(name, None)
            else:
                target[name] = value
        try:
            kv_offload = KvOffload.model_validate(kv)
        except ValidationError as exc:
            msg = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
            raise UserError(f"--set: points.{p.name}.kv_offload: {msg}") from None
        out.append(p.model_copy(update={"args": args, "env": env, "kv_offload": kv_offload}))
    return recipe, out


PLACING_LAUNCHERS = ("local", "pyxis")


def check_placeable(plans: list[PointPlan], launcher: str, source: str) -> None:
    """A deployment runs where its nodes can be placed: launcher local (every node on this host) or pyxis (one
    srun step per node of a Slurm allocation). Refused in one line before anything starts."""
    if launcher not in PLACING_LAUNCHERS and any(p.deployment is not None for p in plans):
        raise UserError(f"{source}: deployment: --launcher {launcher} cannot place a deployment's processes on "
                        "their nodes; use local (every node on this host) or pyxis (a Slurm allocation)")


def load_plans(recipe_path: str | Path, point_names: list[str] | None = None,
               overrides: list[str] | None = None, unofficial: bool = False) -> tuple[Recipe, list[PointPlan]]:
    """Load, override, expand and plan: every error is a one-line UserError before anything starts.

    `unofficial` (`--unofficial`) marks the run as a smoke run, as `client.unofficial: true` does: AIPerf runs
    with `--unsafe-override`. It is a label of the run, not a setting: neither a variant nor in the fingerprint."""
    source = str(recipe_path)
    recipe = load_recipe(recipe_path)
    if unofficial:
        recipe = recipe.model_copy(update={"client": recipe.client.model_copy(update={"unofficial": True})})
    recipe, points = apply_overrides(recipe, point_names, list(overrides or []), source)
    return recipe, build_plans(recipe, points, source, Path(recipe_path).resolve().parent)

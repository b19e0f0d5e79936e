"""Loading a recipe: YAML text → a validated `Recipe` (schema, flags, env, rules) → concrete `Point`s.

Every mistake is a one-line `UserError` naming the file, the line and the key path. `expand_points`
resolves `extends` chains and `zip:` into the effective args, env and KV offload of every point.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from harness.errors import UserError
from harness.inputs.input_errors import first_error
from harness.inputs.yaml_input import Where, load_yaml, read_text
from harness.recipe.multinode.deployment_rules import deployment_problems
from harness.recipe.multinode.deployment_schema import DEPLOYMENT_FLAGS, ROLES, Deployment, PointDeployment
from harness.recipe.schema import (
    ACC_ENV_PREFIX,
    MAX_CONC,
    OWNED_FLAGS,
    POINT_NAME,
    KvOffload,
    Point,
    PointSpec,
    Recipe,
    normalize_point_name,
)
from harness.recipe.server_flags import flags
from harness.recipe.server_flags.server_args import render_sim_flags
from harness.recipe.server_flags.sim_args import sim_flags_problem
from harness.redact import add_secret_names


def _normalize_key(path: tuple[str, ...], key: str) -> str:
    return normalize_point_name(key) if path == ("points",) else key


def load_recipe(path: str | Path) -> Recipe:
    """Read and validate a recipe file; any mistake is a one-line UserError naming file, line and key path."""
    return parse_recipe_text(read_text(path, "recipe"), str(path))


def parse_recipe_text(text: str, source: str) -> Recipe:
    """Validate recipe YAML text; `source` names it in errors (a path, or `REV:path`)."""
    raw, lines = load_yaml(text, source, _normalize_key)
    return parse_recipe(raw, source, Where(source, lines))


def parse_recipe(raw: Any, source: str = "<recipe>", where: Where | None = None) -> Recipe:
    """Validate a parsed recipe mapping: schema, point names, flags, env, inheritance."""
    where = where or Where(source)
    if not isinstance(raw, dict):
        raise UserError(f"{source}: a recipe is a mapping of keys")
    points = raw.get("points")
    if isinstance(points, dict):
        renamed: dict[str, Any] = {}
        for key, spec in points.items():
            name = normalize_point_name(key)
            if not POINT_NAME.match(name):
                raise where.error(("points", str(key)), f"point names are concurrencies from 1 to {MAX_CONC}: c28 or 28")
            if name in renamed:
                raise where.error(("points", name), f"given twice ({key!r} and an earlier spelling)")
            renamed[name] = {} if spec is None else spec
        raw = {**raw, "points": renamed}
    try:
        recipe = Recipe.model_validate(raw)
    except ValidationError as exc:
        raise where.error(*first_error(exc, Recipe)) from None
    add_secret_names(recipe.secret_names)  # before anything of the recipe is written or printed
    recipe = _canonical_flags(recipe, where)
    _check_rules(recipe, where)
    expand_points(recipe, source, where)  # inheritance errors surface at load time
    return recipe


def abbreviated_flags(text: str, source: str, overrides: Sequence[str], version: str) -> list[str]:
    """One warning for each SGLang flag that the recipe text or an `args.`/`server.args.` `--set` writes as a
    unique prefix of a longer flag: SGLang's argparse reads it as that flag, and so does the plan, which writes the
    full flag; the warning names it."""
    table = flags.load_table(version)
    raw, _ = load_yaml(text, source, _normalize_key)
    written: list[tuple[str, str]] = []   # (where, flag name as written)

    def walk(node: Any, path: list[str]) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "args" and isinstance(value, dict):
                    written.extend((f"{source}: {'.'.join([*path, 'args', str(k)])}", str(k)) for k in value)
                else:
                    walk(value, [*path, str(key)])

    walk(raw, [])
    for setting in overrides:
        key = setting.partition("=")[0]
        head = next((h for h in ("server.args.", "args.") if key.startswith(h)), None)
        if head is not None:
            written.append((f"--set {key}", key[len(head):]))
    return [f"{where}: --{name.lstrip('-')} is read as {full}, as SGLang reads a unique prefix; write {full}"
            for where, name in written if (full := table.abbreviated(name)) is not None]


# ------------------------------------------------------------------------------------------ checks


def _canonical_flags(recipe: Recipe, where: Where) -> Recipe:
    """Every arg name checked against the pinned flag table and rewritten to its canonical spelling."""

    try:
        table = flags.load_table(recipe.server.sglang_version)
    except UserError:
        known = ", ".join(flags.available_versions())
        raise where.error(("server", "sglang_version"), f"no flag table for SGLang "
                          f"{recipe.server.sglang_version} (have {known}; `harness flags dump` makes one)") from None

    def canon(path: tuple[str, ...], key: str, values: list[Any]) -> tuple[str, list[Any]]:
        """Canonical dashless name and the values as SGLang's parser stores them (`no-X: true` -> `X: false`)."""
        if key.startswith("-"):
            raise where.error((*path, key), f"write flag names without dashes: {key.lstrip('-')}")
        try:
            name = table.resolve(table.match(key)).name[2:]
            converted = [next(iter(flags.validate_args(table, {key: v}, "").values())) for v in values]
        except UserError as exc:
            raise where.error((*path, key), str(exc).split(": ", 1)[1]) from None
        if name in OWNED_FLAGS:
            raise where.error((*path, key), f"--{name} comes from {OWNED_FLAGS[name]}; set it there")
        if recipe.deployment is not None and name in DEPLOYMENT_FLAGS:
            raise where.error((*path, key), f"--{name} comes from {DEPLOYMENT_FLAGS[name]}")
        return name, converted

    def canon_args(path: tuple[str, ...], args: dict[str, Any], listed: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in args.items():
            name, converted = canon(path, key, value if listed else ([] if value is None else [value]))
            if name in out:
                raise where.error((*path, key), f"--{name} is already given under another spelling")
            out[name] = converted if listed else (converted[0] if converted else None)
        return out

    envs: list[tuple[tuple[str, ...], dict[str, Any]]] = [(("server", "env"), dict(recipe.server.env))]
    envs += [(("points", n, "env"), dict(p.env)) for n, p in recipe.points.items()]
    for path, section in [(("deployment",), recipe.deployment),
                          *((("points", n, "deployment"), p.deployment) for n, p in recipe.points.items())]:
        envs += [((*path, role, "env"), dict(getattr(section, role).env)) for role in ROLES
                 if section is not None and getattr(section, role) is not None]
    for path, env in envs:
        for key in env:
            if key.startswith(ACC_ENV_PREFIX):
                raise where.error((*path, key), "synthetic acceptance is set by the harness from the golden curve "
                                  "(speculative.golden); remove it from the recipe")
    if recipe.zip is not None:
        for key in recipe.zip.env:
            if key.startswith(ACC_ENV_PREFIX):
                raise where.error(("zip", "env", key), "synthetic acceptance comes only from the golden curve")
    server = recipe.server.model_copy(update={"args": canon_args(("server", "args"), recipe.server.args)})
    zip_ = recipe.zip and recipe.zip.model_copy(update={"args": canon_args(("zip", "args"), recipe.zip.args, True)})
    points = {n: p.model_copy(update={"args": canon_args(("points", n, "args"), p.args),
                                      "deployment": _canon_roles(p.deployment, ("points", n, "deployment"), canon_args)})
              for n, p in recipe.points.items()}
    deployment = _canon_roles(recipe.deployment, ("deployment",), canon_args)
    return recipe.model_copy(update={"server": server, "zip": zip_, "points": points, "deployment": deployment})


_Section = TypeVar("_Section", Deployment, PointDeployment)


def _canon_roles(section: _Section | None, path: tuple[str, ...],
                 canon_args: Callable[[tuple[str, ...], dict[str, Any]], dict[str, Any]]) -> _Section | None:
    """The section with every role's args in their canonical spelling."""
    if section is None:
        return None
    update: dict[str, Any] = {}
    for role in ROLES:
        spec = getattr(section, role)
        if spec is not None:
            update[role] = spec.model_copy(update={"args": canon_args((*path, role, "args"), dict(spec.args))})
    return section.model_copy(update=update)


def _check_rules(recipe: Recipe, where: Where) -> None:
    z = recipe.zip
    if z is not None:
        for kind, table in (("args", z.args), ("env", z.env)):
            for key, values in table.items():
                if len(values) != len(z.conc):
                    raise where.error(("zip", kind, key), f"{len(values)} values for {len(z.conc)} concurrencies "
                                      "(zip lists are lined up index by index with zip.conc)")
    _check_context_parallel(recipe, where)
    _check_deployment(recipe, where)
    par, gpus = recipe.parallelism, recipe.hardware.gpus_per_node
    if recipe.deployment is None and par.tp * par.pp * par.pcp > gpus:
        pcp = f" x pcp {par.pcp}" if par.pcp > 1 else ""
        raise where.error(("parallelism", "tp"), f"tp {par.tp} x pp {par.pp}{pcp} = {par.tp * par.pp * par.pcp} GPUs, "
                          f"more than hardware.gpus_per_node {gpus} (a point's server runs on one node)")
    if recipe.sim_args:
        problem = sim_flags_problem(render_sim_flags(recipe.sim_args))
        if problem is not None:
            raise where.error(("sim_args",), problem)
    if not recipe.points and recipe.zip is None:
        raise where.error(("points",), "a recipe needs at least one point (points: or zip:)")
    spec = recipe.speculative
    if spec is not None and spec.golden is not None and spec.mode == "perf" and recipe.model.golden_key is None:
        raise where.error(("model", "golden_key"), "needed to look up speculative.golden.curve")


def _check_deployment(recipe: Recipe, where: Where) -> None:
    """The deployment section's rules (`deployment_rules`): the first problem is the error."""

    problems = deployment_problems(recipe, flags.load_table(recipe.server.sglang_version))
    if problems:
        raise where.error(*problems[0])


def _check_context_parallel(recipe: Recipe, where: Where) -> None:
    """`parallelism.dcp`/`pcp` > 1 render `--dcp-size`/`--pcp-size`: refused where the pinned SGLang lacks the flag."""

    table = flags.load_table(recipe.server.sglang_version)
    par = recipe.parallelism
    for key, size, flag in (("dcp", par.dcp, "--dcp-size"), ("pcp", par.pcp, "--pcp-size")):
        if size > 1 and table.get(flag) is None:
            hint = (" (its prefill context parallelism is --attn-cp-size with --enable-prefill-cp in server.args, "
                    "inside tp)" if key == "pcp" and table.get("--attn-cp-size") is not None else "")
            raise where.error(("parallelism", key), f"SGLang {table.version} has no {flag} flag{hint}")


# --------------------------------------------------------------------------------------- expansion


def _specs(recipe: Recipe) -> dict[str, tuple[dict[str, Any], dict[str, Any], PointSpec]]:
    """Per point: the zip values (args, env) and its points: entry (empty when only zipped)."""
    out: dict[str, tuple[dict[str, Any], dict[str, Any], PointSpec]] = {}
    z = recipe.zip
    if z is not None:
        for i, conc in enumerate(z.conc):
            out[f"c{conc}"] = ({k: v[i] for k, v in z.args.items()}, {k: v[i] for k, v in z.env.items()}, PointSpec())
    for name, spec in recipe.points.items():
        zargs, zenv, _ = out.get(name, ({}, {}, spec))
        out[name] = (zargs, zenv, spec)
    return out


def _resolve(name: str, specs: dict[str, tuple[dict[str, Any], dict[str, Any], PointSpec]], recipe: Recipe,
             where: Where, seen: tuple[str, ...]) -> Point:
    zargs, zenv, spec = specs[name]
    if name in seen:
        cycle = " -> ".join((*seen[seen.index(name):], name))
        raise where.error(("points", seen[0], "extends"), f"cycle {cycle}")
    if spec.extends is None:
        args: dict[str, Any] = dict(recipe.server.args)
        env: dict[str, str] = dict(recipe.server.env)
        kv, chain = recipe.kv_offload, []
        role_args: dict[str, dict[str, Any]] = {}
        role_env: dict[str, dict[str, str | None]] = {}
    else:
        if spec.extends not in specs:
            raise where.error(("points", name, "extends"),
                              f"unknown point {spec.extends!r} (points: {', '.join(_order(specs))})")
        parent = _resolve(spec.extends, specs, recipe, where, (*seen, name))
        args, env, kv = dict(parent.args), dict(parent.env), parent.kv_offload
        chain = [*parent.extends_chain, spec.extends]
        role_args, role_env = dict(parent.role_args), dict(parent.role_env)
    if spec.deployment is not None:
        for role in ROLES:
            change = getattr(spec.deployment, role)
            if change is not None:
                role_args[role] = {**role_args.get(role, {}), **change.args}
                role_env[role] = {**role_env.get(role, {}), **change.env}
    for key, value in {**zargs, **spec.args}.items():
        if value is None:
            args.pop(key, None)
        else:
            args[key] = value
    for key, val in {**zenv, **spec.env}.items():
        if val is None:
            env.pop(key, None)
        else:
            env[key] = val
    if spec.kv_offload is not None:
        change = spec.kv_offload.model_dump(exclude_none=True)
        merged = {**kv.model_dump(), **change}
        if change.get("kind") == "none":
            merged.update(hicache_size_gb=None, write_policy=None)
        try:
            kv = KvOffload.model_validate(merged)
        except ValidationError as exc:
            msg = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
            raise where.error(("points", name, "kv_offload"), msg) from None
    conc = int(name[1:])
    return Point(name=name, conc=conc, args=args, env=env, kv_offload=kv, extends_chain=chain, role_args=role_args,
                 role_env=role_env)


def _order(specs: dict[str, Any]) -> list[str]:
    return sorted(specs, key=lambda n: int(n[1:]))


def expand_points(recipe: Recipe, source: str = "<recipe>", where: Where | None = None) -> list[Point]:
    """All points of the recipe, sorted by concurrency, with zip values and `extends` chains resolved."""
    where = where or Where(source)
    specs = _specs(recipe)
    return [_resolve(name, specs, recipe, where, ()) for name in _order(specs)]


def select_points(points: list[Point], names: list[str] | None, source: str = "<recipe>") -> list[Point]:
    """Keep the named points (`c4` or `4`), in concurrency order; unknown names are an error."""
    if not names:
        return points
    wanted = [normalize_point_name(n) for name in names for n in name.split(",") if n]   # c2 c4, or c2,c4
    by_name = {p.name: p for p in points}
    missing = [n for n in wanted if n not in by_name]
    if missing:
        raise UserError(f"{source}: no point {', '.join(missing)} (points: {', '.join(by_name)})")
    return [p for p in points if p.name in wanted]

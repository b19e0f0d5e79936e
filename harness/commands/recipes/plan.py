"""`harness plan RECIPE [--point cN] [--json]`: the exact server command, env, client and resources of
every point, validated, without launching anything. `harness plan --schema` prints the recipe field
reference (the field table of docs/recipes.md is generated from it)."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import Any

from harness.artifacts import print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("recipe", nargs="?", help="recipe YAML file")
    parser.add_argument("--point", dest="points", action="append", metavar="cN",
                        help="only this point (c28 or 28; repeatable; default: all)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="SETTING=VALUE",
                        help="override a setting first, e.g. engine=sim or args.max-running-requests=64")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--unofficial", action="store_true",
                        help="a smoke run (local corpus, short window): AIPerf runs with --unsafe-override and the "
                             "results are marked unofficial, never publishable")
    parser.add_argument("--schema", action="store_true", help="print the recipe field reference (markdown)")
    parser.add_argument("--json-schema", action="store_true",
                        help="with --schema: print the JSON Schema of recipes (for editors), from the models")


def main(args: argparse.Namespace) -> int:
    from harness.errors import UserError

    if args.json_schema and not args.schema:
        raise UserError("plan: --json-schema goes with --schema (harness plan --schema --json-schema)")
    if args.schema:
        sys.stdout.write(recipe_json_schema() if args.json_schema else schema_markdown())
        return 0
    if not args.recipe:
        raise UserError("plan: give a recipe file (or --schema)")
    from harness.commands.running.run import warn_abbreviated_flags, warn_idle_overrides
    from harness.preflight.aiperf_scenario import refuse_unless_accepted
    from harness.recipe.points import load_plans

    recipe, plans = load_plans(args.recipe, args.points, args.overrides, args.unofficial)
    warn_abbreviated_flags(args.recipe, recipe.server.sglang_version, args.overrides)
    warn_idle_overrides(args.recipe, args.points, args.overrides, args.unofficial, plans, args.overrides)
    refuse_unless_accepted(plans, args.recipe)
    if args.json:
        doc = {"config_key": recipe.config_key, "image": recipe.image, "points": [p.public() for p in plans]}
        print_json(doc)
        return 0
    print(f"{recipe.config_key}  image {recipe.image}  engine {recipe.engine}  "
          f"SGLang flags {recipe.server.sglang_version}  {len(plans)} point(s)")
    for plan in plans:
        print()
        print(render_point(plan))
    return 0


def render_point(plan: Any) -> str:
    """One point as a human reads it: header, env, the server command one flag per line, client, resources
    (secrets redacted)."""
    from harness.artifacts import command_view

    chain = f", starting from {' -> '.join(plan.extends_chain)}" if plan.extends_chain else ""
    r, c = plan.resources, plan.client
    lines = [f"== {plan.name} (concurrency {plan.conc}{chain})  fingerprint {plan.fingerprint[:16]}",
             f"resources: {r.num_gpus} x {r.gpu} on {r.nodes} node(s) of {r.gpus_per_node}"]
    if plan.deployment is not None:
        lines += render_deployment(plan.deployment)
    else:
        argv, env = command_view(plan.server.launch_argv(), plan.server.env)
        lines += [f"  {k}={shlex.quote(v)}" for k, v in env.items()]
        lines.append("  " + " \\\n    ".join(_argv_lines(argv)))
    warmup = (f"{c.warmup_s:g} s warmup" if c.warmup_s > 0
              else f"{c.warmup_requests_per_lane} warmup calls per lane" if c.warmup_requests_per_lane is not None
              else "the scenario's warmup")
    starts = ", every lane starting at once" if c.burst_phase_starts else ""
    lines.append(f"client: {c.conc} sessions of {c.traces}, {warmup}, "
                 f"{c.duration_s:g} s window{starts}, {c.grace_s:g} s grace, seed {c.seed}, model {c.served_model_name}"
                 + ("; UNOFFICIAL (AIPerf --unsafe-override: submission_valid false)" if c.unofficial else ""))
    return "\n".join(lines)


def render_deployment(dep: Any) -> list[str]:
    """A deployment as a human reads it: per role its env, per worker and node the command; then the router."""
    from harness.artifacts import command_view

    lines = [f"deployment: {dep.layout}, {dep.nodes} node(s), {dep.num_gpus} GPU(s)"]
    for role in dep.roles:
        par = role.parallelism
        lines.append(f"{role.role}: {role.workers} worker(s) x {role.gpus_per_worker} GPU(s) on "
                     f"{role.nodes_per_worker} node(s) each (tp {par.tp}, ep {par.ep}, pp {par.pp}"
                     + (f", dp attention {par.dp_attention}" if par.dp_attention else "")
                     + (f", dcp {par.dcp}" if par.dcp > 1 else "") + ")")
        lines += [f"  {k}={shlex.quote(v)}" for k, v in command_view([], role.env)[1].items()]
        for worker in role.worker_plans:
            boot = f", bootstrap port {worker.bootstrap_port}" if worker.bootstrap_port is not None else ""
            lines.append(f"  {role.role} worker {worker.index}: {worker.url}{boot}")
            for node in worker.nodes:
                lines.append(f"    node {node.node} (rank {node.node_rank}):")
                lines.append("      " + " \\\n        ".join(_argv_lines(command_view(node.launch_argv(), {})[0])))
    lines.append(f"router ({dep.router.kind}) on {dep.router.node}: {dep.router.url}")
    lines.append("  " + " \\\n    ".join(_argv_lines(command_view(dep.router.launch_argv(), {})[0])))
    return lines


def _argv_lines(argv: list[str]) -> list[str]:
    """The command split so that each flag starts a line with its values."""
    head_end = next((i for i, tok in enumerate(argv) if tok.startswith("--")), len(argv))
    out = [shlex.join(argv[:head_end])]
    for tok in argv[head_end:]:
        if tok.startswith("--"):
            out.append(shlex.quote(tok))
        else:
            out[-1] += " " + shlex.quote(tok)
    return out


def recipe_json_schema() -> str:
    """The JSON Schema (draft 2020-12) of recipe files, generated from the pydantic models (input mode)."""

    from harness.recipe.schema import Recipe

    schema = Recipe.model_json_schema(mode="validation")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "harness recipe",
              **{k: v for k, v in schema.items() if k != "title"}}
    return json.dumps(schema, indent=2, sort_keys=False) + "\n"


def schema_markdown() -> str:
    """The recipe field reference as a markdown table, generated from the recipe models."""
    from harness.recipe.schema import PointSpec, Recipe

    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    _rows(Recipe, "", rows)
    _rows(PointSpec, "points.cN.", rows)
    return "\n".join(rows) + "\n"


def _rows(model: Any, prefix: str, rows: list[str]) -> None:
    import typing

    from pydantic import BaseModel
    from pydantic_core import PydanticUndefined

    for name, field in model.model_fields.items():
        if prefix == "" and name == "points":
            rows.append(f"| `points` | mapping | `{{}}` | {field.description} |")
            continue
        ann = field.annotation
        nested = [a for a in (typing.get_args(ann) or (ann,)) if isinstance(a, type) and issubclass(a, BaseModel)]
        if nested:
            _rows(nested[0], f"{prefix}{name}.", rows)
            continue
        if field.is_required():
            default = "required"
        elif field.default_factory is not None:
            default = f"`{field.default_factory()}`"
        elif field.default is PydanticUndefined:
            default = ""
        else:
            default = f"`{'null' if field.default is None else field.default}`"
        meaning = (field.description or "").replace("|", "\\|")
        rows.append(f"| `{prefix}{name}` | {_type_name(ann)} | {default} | {meaning} |")


def _type_name(ann: Any) -> str:
    """A short, readable spelling of a field's type (`a` \\| `b` for choices, `value` for a flag value)."""
    import types
    import typing

    from harness.recipe.schema import ArgValue

    if ann == ArgValue:
        return "value"
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        if set(args) >= set(typing.get_args(ArgValue)):
            rest = [a for a in args if a not in typing.get_args(ArgValue)]
            return " \\| ".join(["value", *(_type_name(a) for a in rest)])
        return " \\| ".join(_type_name(a) for a in args)
    if origin is dict:
        return f"mapping of {_type_name(args[0])} to {_type_name(args[1])}"
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if ann is type(None):
        return "null"
    return getattr(ann, "__name__", str(ann))

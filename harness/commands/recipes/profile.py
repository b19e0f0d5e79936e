"""`harness profile FILE [--get KEY] [--json]`: check a cluster profile on its own and print it with its
defaults filled in. `harness profile --schema` prints the cluster profile reference (`docs/cluster-profile.md`
is generated from it); with `--json-schema`, the JSON Schema of profile files (for editors)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from harness.artifacts import print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("profile", nargs="?", help="cluster profile YAML (clusters/*.yaml)")
    parser.add_argument("--get", metavar="KEY",
                        help="print one value with defaults applied, e.g. cpu_arch or driver.python (empty when unset)")
    parser.add_argument("--json", action="store_true", help="print the whole profile, defaults filled in, as JSON")
    parser.add_argument("--schema", action="store_true", help="print the cluster profile reference (markdown)")
    parser.add_argument("--json-schema", action="store_true",
                        help="with --schema: print the JSON Schema of cluster profiles (for editors), from the models")


def main(args: argparse.Namespace) -> int:
    from harness.errors import UserError

    if args.json_schema and not args.schema:
        raise UserError("profile: --json-schema goes with --schema (harness profile --schema --json-schema)")
    if args.schema:
        from slurm.profile_doc import json_schema, markdown

        sys.stdout.write(json_schema() if args.json_schema else markdown())
        return 0
    if not args.profile:
        raise UserError("profile: give a cluster profile file (or --schema)")
    from slurm.profile import load_profile

    profile = load_profile(args.profile)
    data = profile.model_dump(mode="json")
    if args.get is not None:
        value = lookup(data, args.get, args.profile)
        print("" if value is None else value if isinstance(value, str) else json.dumps(value))
        return 0
    if args.json:
        print_json(data)
        return 0
    summary = (f"cluster profile {profile.name!r} ({profile.gpus_per_node} x {profile.gpu} per node, "
               f"{profile.cpu_arch}, {profile.container.runtime})")
    placeholders = site_placeholders(args.profile)
    if placeholders:
        print(f"{args.profile}: {summary} is a template: {len(placeholders)} SITE value(s) to replace with this "
              f"site's before a submit: {', '.join(placeholders)}")
        return 1
    print(f"{args.profile}: valid {summary}")
    return 0


def site_placeholders(path: str) -> list[str]:
    """The keys of a profile file whose values are still SITE placeholders (preflight fails on each)."""
    from harness.inputs.yaml_input import load_yaml_file
    from harness.preflight.checks import cluster_fields

    raw, _ = load_yaml_file(path, "cluster profile")
    found = cluster_fields(raw if isinstance(raw, dict) else {}, path)
    return [f.where.removeprefix(f"{path}:") for f in found if f.code == "cluster_placeholder"]


def lookup(data: dict[str, Any], key: str, source: str) -> Any:
    """The value at a dotted key (`driver.python`) of a profile's data; an unknown key is a UserError."""
    from harness.errors import UserError, did_you_mean

    node: Any = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            hint = did_you_mean(part, node) if isinstance(node, dict) else ""
            raise UserError(f"{source}: {key}: no such field{hint} (see harness profile --schema)")
        node = node[part]
    return node

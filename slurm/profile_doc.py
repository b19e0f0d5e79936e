"""The cluster profile reference, generated from the profile models: the page `docs/cluster-profile.md`
(`python -m slurm.profile_doc`, or `harness profile --schema`) and the JSON Schema of profile files
(`harness profile --schema --json-schema`)."""

from __future__ import annotations

import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from slurm.profile import ClusterProfile

EXAMPLE = Path(__file__).with_name("profile_example.yaml")

INTRO = """\
# Cluster profiles

A cluster profile (`clusters/NAME.yaml`) holds the facts of one Slurm cluster that a sweep needs: where the
job array runs (account, partition, QOS), how big a node is and what a task gets, the CPU architecture of
the compute hosts, how the server's container starts and where imported images are cached, where
checkpoints and the trace corpus are staged, and which interpreter runs the harness on the nodes. Recipes
say *what* to benchmark; the profile says *where*. `harness submit RECIPE --cluster clusters/NAME.yaml`
and `harness preflight RECIPE --cluster clusters/NAME.yaml` read it.

A profile is strict: an unknown key, a wrong type or a malformed value is one line naming the file, the line,
the key and what was expected (exit status 2), before anything reaches Slurm. `harness profile FILE` checks
one without a recipe (exit status 1 while values marked SITE are left to fill in, naming them); `harness profile --schema --json-schema` prints the JSON Schema of profile files for
editors (for example `# yaml-language-server: $schema=cluster-profile.schema.json` at the top of the file,
with the schema saved next to it).

## The CPU architecture

`cpu_arch` is the architecture of the compute hosts (`uname -m`: `aarch64` on GB300's Grace hosts, `x86_64`
on H200 hosts). Preflight asks Slurm for the architecture of the partition's nodes (`scontrol show node`,
the `Arch=` field) and fails when they are not `cpu_arch`. Two things built for one architecture are kept
apart by it:

- imported images live in `<container.image_cache_dir>/<cpu_arch>/`, so an aarch64 and an x86_64 cluster
  that share one cache directory never reuse each other's `.sqsh` or `.sif` (the import also refuses to run
  on a node of another architecture);
- the driver interpreter (`driver.python`, or `--python`) must be a venv built on a host of `cpu_arch`:
  preflight fails when its compiled packages are for another architecture, or when it is left unset and
  the machine running `harness submit` is of another architecture.

## Fields

Every field, generated from the profile models (`harness profile --schema` prints this page).

"""

EXAMPLE_HEAD = """
## A complete example

Every field set (`harness profile` accepts it as it is):

```yaml
"""


def json_schema() -> str:
    """The JSON Schema (draft 2020-12) of cluster profile files, from the models (input mode)."""
    schema = ClusterProfile.model_json_schema(mode="validation")
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "harness cluster profile",
              **{k: v for k, v in schema.items() if k != "title"}}
    return json.dumps(schema, indent=2) + "\n"


def field_table() -> str:
    """One row per field (nested sections as `section.key`): name, type, default, description, example."""
    rows = ["| field | type | default | description | example |", "|---|---|---|---|---|"]
    _rows(ClusterProfile, "", rows)
    return "\n".join(rows) + "\n"


def markdown() -> str:
    """The whole reference page: the introduction, the field table and the complete example."""
    return INTRO + field_table() + EXAMPLE_HEAD + EXAMPLE.read_text() + "```\n"


def example_text(page: str) -> str:
    """The example profile of a reference page (the YAML block after its heading)."""
    block = page[page.index(EXAMPLE_HEAD) + len(EXAMPLE_HEAD):]
    return block[:block.index("```\n")]


def _rows(model: type[BaseModel], prefix: str, rows: list[str]) -> None:
    for name, field in model.model_fields.items():
        nested = _nested_model(field.annotation)
        if nested is not None:
            rows.append(f"| `{prefix}{name}` | section | {_default(field)} | {_cell(field.description or '')} | |")
            _rows(nested, f"{prefix}{name}.", rows)
            continue
        example = f"`{json.dumps(field.examples[0])}`" if field.examples else ""
        rows.append(f"| `{prefix}{name}` | {type_name(field.annotation)} | {_default(field)} | "
                    f"{_cell(field.description or '')} | {example} |")


def _nested_model(ann: Any) -> type[BaseModel] | None:
    for a in typing.get_args(ann) or (ann,):
        if isinstance(a, type) and issubclass(a, BaseModel):
            return a
    return None


def _default(field: Any) -> str:
    if field.is_required():
        return "required"
    value = field.default_factory() if field.default_factory is not None else field.default
    if value is PydanticUndefined:
        return ""
    if isinstance(value, BaseModel):
        return "see below"
    return f"`{json.dumps(value)}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def type_name(ann: Any) -> str:
    """A short spelling of a field's type: `a` \\| `b` for choices, `list of string`, `string` \\| `null`."""
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(type_name(a) for a in args)
    if origin is dict:
        return f"mapping of {type_name(args[0])} to {type_name(args[1])}"
    if origin is list:
        return f"list of {type_name(args[0])}"
    return {str: "string", int: "integer", bool: "boolean", float: "number", type(None): "null"}.get(
        ann, getattr(ann, "__name__", str(ann)))


if __name__ == "__main__":
    sys.stdout.write(markdown())

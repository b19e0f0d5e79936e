"""InferenceX's own result contract, as the JSON Schema its exporter writes, for checking our rows.

`tests/fixtures/inferencex-contract/upstream/agentx_row.schema.json` is the output of InferenceX's
`python -m infx.results.schema export` (the JSON Schema of `AgentXRow` = `AgentXSingleNodeRow |
AgentXMultinodeRow`, pydantic's rendering of the models); its README records the commits and hashes.
The models are strict, so an integer field takes no float (JSON Schema alone would accept 1.0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

UPSTREAM = Path(__file__).parent / "fixtures" / "inferencex-contract" / "upstream"


def _validator(name: str, branch: str | None = None) -> jsonschema.protocols.Validator:
    schema = json.loads((UPSTREAM / f"{name}.schema.json").read_text())
    if branch is not None:  # one member of the oneOf, for readable errors
        schema = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{branch}"}
    base = jsonschema.Draft202012Validator
    strict_ints = base.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool))
    strict = jsonschema.validators.extend(base, type_checker=strict_ints)
    strict.check_schema(schema)
    return strict(schema)


AGENTX_ROW = _validator("agentx_row")
AGENTX_SINGLE_NODE = _validator("agentx_row", "AgentXSingleNodeRow")
EVAL_ROW = _validator("eval_row")


def contract_errors(row: Any, validator: jsonschema.protocols.Validator = AGENTX_ROW) -> list[str]:
    """InferenceX's objections to `row` (empty: accepted); a single-node row's are its branch's."""
    if not any(True for _ in validator.iter_errors(row)):
        return []
    if validator is AGENTX_ROW and isinstance(row, dict) and row.get("is_multinode") is False:
        validator = AGENTX_SINGLE_NODE
    return [f"{'/'.join(map(str, e.absolute_path)) or '<row>'}: {e.message[:200]}"
            for e in validator.iter_errors(row)] or ["<row>: matches no AgentX row kind"]


def check_contract(row: Any, validator: jsonschema.protocols.Validator = AGENTX_ROW) -> None:
    errors = contract_errors(row, validator)
    assert not errors, "InferenceX's contract rejects the row:\n" + "\n".join(errors[:20])

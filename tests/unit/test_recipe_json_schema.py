"""`harness plan --schema --json-schema`: the JSON Schema of recipes, checked with a real validator."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from harness.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
RECIPES = [*sorted((ROOT / "recipes").glob("*.yaml")), ROOT / "tests" / "fixtures" / "recipes" / "example.yaml"]


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli_main(["plan", "--schema", "--json-schema"]) == 0
    schema = json.loads(buf.getvalue())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: p.name)
def test_shipped_recipes_validate(validator, recipe):
    assert [e.message for e in validator.iter_errors(yaml.safe_load(recipe.read_text()))] == []


def test_mistakes_the_loader_rejects_are_schema_errors_too(validator):
    good = yaml.safe_load((ROOT / "recipes" / "quickstart-sim.yaml").read_text())
    for mutate in (lambda r: r.update(enigne="sim"),                       # typo of a top-level key
                   lambda r: r["client"].update(duraton_s=10),              # typo in a section
                   lambda r: r.update(engine="vllm"),                       # not a choice
                   lambda r: r.pop("config_key")):                          # required
        bad = json.loads(json.dumps(good))
        mutate(bad)
        assert list(validator.iter_errors(bad)), bad


def test_json_schema_needs_schema(capsys):
    assert cli_main(["plan", "--json-schema"]) == 2
    assert "--json-schema goes with --schema" in capsys.readouterr().err

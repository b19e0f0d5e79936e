"""The recipe reference (docs/recipes.md) stays in sync with the recipe models and the example fixture."""

from __future__ import annotations

from pathlib import Path

from harness.commands.recipes.plan import schema_markdown
from harness.recipe.points import load_plans

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tests" / "fixtures" / "recipes" / "example.yaml"


def _section() -> str:
    text = (ROOT / "docs" / "recipes.md").read_text()
    return text[text.index("<!-- section:recipes -->"):text.index("<!-- /section:recipes -->")]


def test_readme_field_table_is_generated_from_the_models() -> None:
    assert schema_markdown() in _section(), "regenerate the table with `harness plan --schema`"


def test_every_recipe_field_is_documented() -> None:
    from harness.recipe.schema import Recipe

    table = schema_markdown()
    for name in Recipe.model_fields:
        assert f"| `{name}" in table


def test_readme_example_is_the_checked_fixture_and_plans() -> None:
    assert EXAMPLE.read_text().rstrip("\n") in _section()
    _, plans = load_plans(EXAMPLE)
    assert [p.name for p in plans] == ["c1", "c2", "c4", "c16", "c32", "c40"]
    by = {p.name: p for p in plans}
    assert by["c2"].server.env["SGLANG_SIMULATE_ACC_LEN"] == "3.39"
    argv = by["c40"].server.argv
    assert argv[argv.index("--hicache-write-policy") + 1] == "write_back"
    assert "--prefill-decode-interval" not in argv
    assert argv[argv.index("--max-running-requests") + 1] == "64"

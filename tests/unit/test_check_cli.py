"""`harness check`: exit status, text and JSON output, the shipped recipes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "check"
MUSE = [ROOT / "recipes" / f"musespark-fp4-{gpu}-sglang-agentic-dflash.yaml" for gpu in ("gb300", "h200")]


def test_passing_recipe_exits_zero_with_one_line_per_rule(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.check import RULES

    assert cli_main(["check", str(FIXTURES / "good-dflash.yaml")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("(check-good-dflash): PASS")
    assert [line.split()[1] for line in lines[1:]] == [rule.id for rule in RULES]
    not_applicable = {"sglang-hooks", "dspark-verify-mode"}   # no SGLang wheel in the unit tier; no DSpark
    assert all(line.split()[0] == ("N/A" if line.split()[1] in not_applicable else "PASS") for line in lines[1:])


def test_failing_recipe_exits_one_and_json_names_every_point(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["check", "--json", str(FIXTURES / "nvfp4-nextn-moe-in-base.yaml")]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "FAIL"
    rule = next(r for r in doc["recipes"][0]["rules"] if r["id"] == "forbidden-env")
    assert rule["status"] == "FAIL"
    assert [f["point"] for f in rule["findings"]] == ["c1", "c5", "c10", "c24", "c28"]


@pytest.mark.parametrize("text", ["image: [", "config_key: x\nunknown_key: 1\n"])
def test_unreadable_recipe_exits_two(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    assert cli_main(["check", str(path)]) == 2
    assert str(path) in capsys.readouterr().err


def test_missing_recipe_exits_two() -> None:
    assert cli_main(["check", "/nonexistent/recipe.yaml"]) == 2


@pytest.mark.parametrize("recipe", MUSE, ids=lambda p: p.stem)
def test_shipped_muse_spark_recipes_pass(recipe: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not recipe.exists():
        pytest.skip(f"{recipe.name} is not shipped in this checkout")
    assert cli_main(["check", str(recipe)]) == 0
    assert "FAIL" not in capsys.readouterr().out


def test_the_readme_pre_merge_check_of_every_shipped_recipe_is_green(capsys: pytest.CaptureFixture[str]) -> None:
    """README: `harness check recipes/*.yaml` before merging a recipe change; main must pass it."""
    shipped = sorted((ROOT / "recipes").glob("*.yaml"))
    assert len(shipped) >= 2
    assert cli_main(["check", *map(str, shipped)]) == 0, capsys.readouterr().out
    assert "FAIL" not in capsys.readouterr().out


def test_muse_spark_copy_with_nvfp4_nextn_moe_in_base_fails_on_every_point(tmp_path: Path) -> None:
    from harness.check import check_recipe
    from harness.recipe.load import expand_points, load_recipe

    if not MUSE[0].exists():
        pytest.skip("the GB300 Muse Spark recipe is not shipped in this checkout")
    text = MUSE[0].read_text()
    assert "\n  env:\n" in text
    copy = tmp_path / MUSE[0].name
    copy.write_text(text.replace("\n  env:\n", "\n  env:\n    SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: \"1\"\n", 1))
    names = [p.name for p in expand_points(load_recipe(MUSE[0]))]
    report = check_recipe(copy)
    assert report.status == "FAIL"
    rule = next(r for r in report.results if r.rule.id == "forbidden-env")
    assert rule.status == "FAIL"
    assert [f.point for f in rule.findings] == names
    assert all(f.evidence.endswith("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1") for f in rule.findings)
    assert "c28 (inherits from c24 ← base): SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1" in [f.evidence for f in rule.findings]
    assert all(r.status != "FAIL" for r in report.results if r.rule.id != "forbidden-env")

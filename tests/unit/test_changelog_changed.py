"""`harness changed --base REV`: exactly the config keys whose points differ, on a git fixture repository."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from harness.check.changed import Curve, diff_curves
from harness.cli import main as cli_main

RECIPE = """\
config_key: {key}
image: lmsysorg/sglang:v0.5.23
engine: sim
model:
  path: demo/agentic-coder-8b
  served_name: agentic-coder
hardware:
  gpu: sim
  gpus_per_node: 1
server:
  args:
    max-running-requests: 32
client:
  traces: traces/quickstart
  unofficial: true
points:
  c2: {{}}
  c4: {{}}
  c8:
    args:
      max-running-requests: 48
"""


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    for key in ("same", "comment-only", "point-edited", "point-added", "image-bumped", "retired"):
        (recipes / f"{key}.yaml").write_text(RECIPE.format(key=key))
    (recipes / "notes.txt").write_text("not a recipe\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base")

    (recipes / "comment-only.yaml").write_text("# reworded comment\n" + RECIPE.format(key="comment-only"))
    (recipes / "point-edited.yaml").write_text(
        RECIPE.format(key="point-edited").replace("max-running-requests: 48", "max-running-requests: 64"))
    (recipes / "point-added.yaml").write_text(RECIPE.format(key="point-added") + "  c16: {}\n")
    (recipes / "image-bumped.yaml").write_text(
        RECIPE.format(key="image-bumped").replace("v0.5.23", "v0.5.24"))
    (recipes / "retired.yaml").unlink()
    (recipes / "brand-new.yaml").write_text(RECIPE.format(key="brand-new"))
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "change")
    (recipes / "uncommitted.yaml").write_text(RECIPE.format(key="uncommitted"))
    return tmp_path


def test_changed_reports_exactly_the_changed_keys(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["changed", "--base", "HEAD~1", "--repo", str(repo), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    got = {c["config-key"]: c["status"] for c in doc["changed"]}
    assert got == {"point-edited": "modified", "point-added": "modified", "image-bumped": "modified",
                   "retired": "removed", "brand-new": "added", "uncommitted": "added"}
    by_key = {c["config-key"]: c for c in doc["changed"]}
    assert [p["conc"] for p in by_key["point-edited"]["added"]] == [8]
    assert [p["conc"] for p in by_key["point-edited"]["removed"]] == [8]
    assert [p["conc"] for p in by_key["point-added"]["added"]] == [16]
    assert by_key["point-added"]["removed"] == []
    assert {p["image"] for p in by_key["image-bumped"]["added"]} == {"lmsysorg/sglang:v0.5.24"}
    assert [p["conc"] for p in by_key["retired"]["base-points"]] == [2, 4, 8]
    assert doc["warnings"] == []


def test_changed_text_output(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["changed", "--base", "HEAD~1", "--repo", str(repo)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "brand-new  added: c2 c4 c8 added",
        "image-bumped  modified: c2 c4 c8 changed",
        "point-added  modified: c16 added",
        "point-edited  modified: c8 changed",
        "retired  removed: c2 c4 c8 removed",
        "uncommitted  added: c2 c4 c8 added",
    ]


def test_nothing_changed_against_the_head(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "recipes" / "uncommitted.yaml").unlink()
    assert cli_main(["changed", "--base", "HEAD", "--repo", str(repo)]) == 0
    assert capsys.readouterr().out == "no config key changed since HEAD\n"


def test_bad_revision_and_broken_recipe_exit_two(repo: Path) -> None:
    assert cli_main(["changed", "--base", "no-such-rev", "--repo", str(repo)]) == 2
    (repo / "recipes" / "broken.yaml").write_text("config_key: broken\nimage: [\n")
    assert cli_main(["changed", "--base", "HEAD", "--repo", str(repo)]) == 2


def test_base_recipe_that_no_longer_loads_counts_as_changed(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "recipes" / "old-schema.yaml").write_text(RECIPE.format(key="old-schema") + "retired_field: 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "old schema")
    (repo / "recipes" / "old-schema.yaml").write_text(RECIPE.format(key="old-schema"))
    assert cli_main(["changed", "--base", "HEAD", "--repo", str(repo), "--json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert {c["config-key"]: c["status"] for c in doc["changed"]} == {"old-schema": "modified"}
    assert "old-schema" in doc["warnings"][0] and "retired_field" in doc["warnings"][0]


def test_diff_curves_is_pure_and_ignores_order() -> None:
    a = Curve("k", "a.yaml", frozenset({("f1", 2, "img"), ("f2", 4, "img")}))
    b = Curve("k", "b.yaml", frozenset({("f2", 4, "img"), ("f1", 2, "img")}))
    assert diff_curves({"k": a}, {"k": b}) == []
    c = Curve("k", "c.yaml", frozenset({("f1", 2, "img"), ("f3", 4, "img")}))
    [change] = diff_curves({"k": a}, {"k": c})
    assert change.summary() == "modified: c4 changed"


def test_golden_curve_change_marks_the_recipes_using_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = Path(__file__).resolve().parents[2]
    git(tmp_path, "init", "-q")
    (tmp_path / "recipes").mkdir()
    (tmp_path / "golden_al_distribution").mkdir()
    spec = (root / "tests" / "fixtures" / "check" / "good-dflash.yaml").read_text()
    (tmp_path / "recipes" / "spec.yaml").write_text(spec)
    (tmp_path / "recipes" / "plain.yaml").write_text(RECIPE.format(key="plain"))
    golden = tmp_path / "golden_al_distribution" / "musespark_dflash.yaml"
    golden.write_text((root / "golden_al_distribution" / "musespark_dflash.yaml").read_text())
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base")
    golden.write_text(golden.read_text() + "# re-measured\n")
    assert cli_main(["changed", "--base", "HEAD", "--repo", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "check-good-dflash  modified: golden curve musespark_dflash changed\n"

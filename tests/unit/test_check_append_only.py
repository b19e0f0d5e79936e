"""`append-only: true` changelog entries (InferenceX Check 12): `harness changelog validate --base REV` refuses an
append-only change that edits, removes or re-images an existing point, as `harness changed` reads the points."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.check.append_only import key_problems
from harness.check.changed import KeyChange
from harness.cli import main as cli_main
from tests.unit.test_changelog_changed import RECIPE, git

ENTRY = """\
- config-keys: ["{key}"]
  description: ["{what}"]
  pr-link: https://github.com/o/r/pull/{n}
{extra}"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    (tmp_path / "recipes").mkdir()
    for key in ("grow", "edit"):
        (tmp_path / "recipes" / f"{key}.yaml").write_text(RECIPE.format(key=key))
    (tmp_path / "perf-changelog.yaml").write_text(ENTRY.format(key="grow", what="first", n=1, extra=""))
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "base")
    (tmp_path / "recipes" / "grow.yaml").write_text(RECIPE.format(key="grow") + "  c16: {}\n")
    (tmp_path / "recipes" / "edit.yaml").write_text(
        RECIPE.format(key="edit").replace("max-running-requests: 48", "max-running-requests: 64") + "  c16: {}\n")
    return tmp_path


def _append(repo: Path, *entries: str) -> Path:
    path = repo / "perf-changelog.yaml"
    path.write_text(path.read_text() + "".join(entries))
    return path


def _validate(path: Path) -> int:
    return cli_main(["changelog", "validate", str(path), "--base", "HEAD"])


def test_an_append_only_change_that_only_adds_points_passes(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _append(repo, ENTRY.format(key="grow", what="add c16", n=2, extra="  append-only: true\n"))
    assert _validate(path) == 0, capsys.readouterr().err


def test_an_append_only_change_that_edits_a_point_is_refused(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _append(repo, ENTRY.format(key="*", what="add c16", n=2, extra="  append-only: true\n"))
    assert _validate(path) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"error: {path}: [1]: append-only (InferenceX Check 12): edit: c8 of the base changed or removed "
                   "(existing points must stay as they were)"]


def test_without_append_only_the_same_change_is_a_regular_entry(repo: Path) -> None:
    assert _validate(_append(repo, ENTRY.format(key="*", what="retune c8", n=2, extra=""))) == 0


def test_append_only_and_regular_entries_do_not_mix(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _append(repo, ENTRY.format(key="grow", what="add c16", n=2, extra="  append-only: true\n"),
                   ENTRY.format(key="edit", what="retune c8", n=3, extra=""))
    assert _validate(path) == 2
    assert "[2]: append-only (InferenceX Check 12): regular entries may not be mixed with append-only ones" in \
        capsys.readouterr().err


def test_added_points_must_run_on_the_curves_image() -> None:
    base = [("fp1", 2, "img:a"), ("fp2", 4, "img:a")]
    grown = KeyChange("k", "modified", base, [*base, ("fp3", 8, "img:b")])
    assert key_problems(grown) == ["k: added c8 on image img:b, the curve's is img:a"]
    assert key_problems(KeyChange("k", "modified", base, [*base, ("fp3", 8, "img:a")])) == []
    assert key_problems(KeyChange("k", "added", [], base)) == [
        "k is a new config key (append-only adds points to an existing curve)"]
    golden = KeyChange("k", "modified", base, base, ["golden curve g changed"])
    assert key_problems(golden) == ["k: golden curve g changed (it changes every existing point)"]

"""YAML tags in the files users write (recipes, cluster profiles, golden curves) and in `--set` values are
refused in one line naming the file, the line and the tag, exit 2: never a traceback, never a constructed
object."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.inputs.yaml_input import load_yaml
from harness.recipe.golden import load_curve
from harness.recipe.points import parse_override
from tests.unit.test_bad_input import BASE, ROOT, one_error_line, recipe, run

TAGGED = [
    ("!!int 1e3", "'!!int'"),
    ("!!python/object/apply:os.system [\"touch /tmp/harness-yaml-tag\"]", "'!!python/object/apply:os.system'"),
    ("!!python/name:os.system", "'!!python/name:os.system'"),
    ("!custom 3", "'!custom'"),
    ("!!str 5", "'!!str'"),
    ("!!map {a: 1}", "'!!map'"),
]


@pytest.mark.parametrize(("value", "tag"), TAGGED)
def test_a_tag_in_a_recipe(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, tag: str) -> None:
    text = BASE + f"note_tagged: {value}\n"
    line = one_error_line(*run(capsys, "plan", recipe(tmp_path, text)))
    n = text.count("\n")
    assert line == (f"error: {tmp_path / 'r.yaml'}:{n}: YAML tag {tag} is not accepted (tags are refused: write the "
                    "value plainly, a string in quotes)")
    assert not Path("/tmp/harness-yaml-tag").exists()


def test_a_tag_in_a_set_value_is_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A `--set` value that is not plain YAML is taken as the text it is (never a tagged object)."""
    line = one_error_line(*run(capsys, "plan", recipe(tmp_path, BASE), "--set", "client.seed=!!int 1e3"))
    assert line.endswith("(with --set): client.seed: Input should be a valid integer, unable to parse string as an "
                         "integer"), line
    assert parse_override("note=!!python/name:os.system") == (["note"], "!!python/name:os.system")


def test_a_tag_in_a_cluster_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text((ROOT / "clusters" / "local-ci.yaml").read_text() + "extra: !!python/tuple [1, 2]\n")
    line = one_error_line(*run(capsys, "profile", str(profile)))
    assert f"{profile}:" in line and "YAML tag '!!python/tuple' is not accepted" in line, line


def test_a_tag_in_a_golden_curve(tmp_path: Path) -> None:
    shutil.copy(ROOT / "golden_al_distribution" / "qwen3.5_mtp.yaml", tmp_path / "qwen3.5_mtp.yaml")
    with open(tmp_path / "qwen3.5_mtp.yaml", "a") as fh:
        fh.write("tagged: !custom x\n")
    with pytest.raises(UserError, match=r"qwen3\.5_mtp\.yaml:\d+: YAML tag '!custom' is not accepted"):
        load_curve("qwen3.5_mtp", tmp_path)


def test_tag_like_text_in_strings_still_reads() -> None:
    assert load_yaml('a: "!!int 1e3"\nb: ! x\nc: 1e3\n', "s")[0] == {"a": "!!int 1e3", "b": "x", "c": "1e3"}

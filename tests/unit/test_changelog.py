"""perf-changelog.yaml: entry schema, byte hygiene, append-only against a base, and the CLI over git."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from harness import changelog
from harness.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
ENTRY = """\
- config-keys:
    - quickstart-sim
  scenario-type:
    - agentic-coding
  description:
    - "First entry."
  pr-link: https://github.com/example/harness/pull/1
"""
SECOND = """\
- config-keys:
    - musespark-*
  description:
    - "Second entry."
  pr-link: https://github.com/example/harness/pull/XXX
"""
KNOWN = {"quickstart-sim", "musespark-fp4-gb300-sglang-agentic-dflash"}


def problems(text: str | bytes, base: str | None = None, known: set[str] | None = KNOWN) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return changelog.validate(data, "perf-changelog.yaml", None if base is None else base.encode(), "main",
                              known)[1]


def test_valid_entries_parse() -> None:
    entries, found = changelog.validate((ENTRY + SECOND).encode(), "f", None, known_keys=KNOWN)
    assert found == []
    assert [e.config_keys for e in entries] == [["quickstart-sim"], ["musespark-*"]]
    assert entries[0].scenario_type == ["agentic-coding"] and entries[1].scenario_type is None


def test_shipped_changelog_is_valid() -> None:
    assert cli_main(["changelog", "validate", str(ROOT / "perf-changelog.yaml")]) == 0


@pytest.mark.parametrize(("text", "expected"), [
    (ENTRY.replace("  pr-link:", "  prlink:"), "perf-changelog.yaml: [0].pr-link: Field required"),
    (ENTRY + "  extra: 1\n", "perf-changelog.yaml: [0].extra: Extra inputs are not permitted"),
    (ENTRY.replace("pull/1", "issues/1"), "perf-changelog.yaml: [0].pr-link: String should match pattern"),
    (ENTRY.replace("agentic-coding", "chat"), "perf-changelog.yaml: [0].scenario-type.0: Input should be"),
    ("- config-keys: []\n  description: [x]\n  pr-link: https://github.com/a/b/pull/2\n",
     "perf-changelog.yaml: [0].config-keys: List should have at least 1 item"),
    ("config-keys: [a]\n", "perf-changelog.yaml: <root>: expected a list of entries"),
    (ENTRY + "  description:\n    - again\n", "perf-changelog.yaml:5: 0.description: given twice (again on line 8)"),
    ("", "perf-changelog.yaml: <root>: no entries"),
    ("[]\n", "perf-changelog.yaml: <root>: no entries"),
])
def test_schema_mistakes_name_the_entry_and_key(text: str, expected: str) -> None:
    found = problems(text)
    file, _, rest = expected.partition(": ")
    assert len(found) == 1 and re.match(re.escape(file) + r"(:\d+)?: " + re.escape(rest), found[0]), found


def test_unknown_config_key_is_named() -> None:
    assert problems(ENTRY.replace("quickstart-sim", "quickstart-sym")) == [
        ("perf-changelog.yaml: [0].config-keys: 'quickstart-sym' matches no recipe "
        "(known: musespark-fp4-gb300-sglang-agentic-dflash, quickstart-sim)")]


@pytest.mark.parametrize(("data", "expected"), [
    (ENTRY.replace("First entry.", "First\tentry."), "perf-changelog.yaml:6: tab character"),
    (ENTRY.replace("\n", "\r\n"), "perf-changelog.yaml:1: CR line ending"),
    (ENTRY.replace("- quickstart-sim\n", "- quickstart-sim  \n"), "perf-changelog.yaml:2: trailing whitespace"),
    (ENTRY.rstrip("\n"), "perf-changelog.yaml: no newline at the end of the file"),
    (ENTRY + "\n", "perf-changelog.yaml: blank lines at the end of the file"),
    (ENTRY.encode().replace(b"First", b"F\xffrst"), "perf-changelog.yaml:6: not UTF-8"),
])
def test_byte_hygiene(data: str | bytes, expected: str) -> None:
    found = problems(data)
    assert found and found[0].startswith(expected), found


def test_appending_is_allowed() -> None:
    assert problems(ENTRY + SECOND, base=ENTRY) == []
    assert problems(ENTRY, base="") == []


def test_editing_an_earlier_entry_is_rejected() -> None:
    found = problems(ENTRY.replace("First entry.", "First entry, reworded.") + SECOND, base=ENTRY)
    assert found == [("perf-changelog.yaml: [0]: entry for quickstart-sim was edited (description); "
                     "append a new entry instead")]


def test_deleting_an_earlier_entry_is_rejected() -> None:
    found = problems(SECOND, base=ENTRY + SECOND)
    assert "perf-changelog.yaml: [1]: entry for musespark-* was deleted (entries in main are never removed)" in found


def test_inserting_before_an_earlier_entry_is_rejected() -> None:
    found = problems(SECOND + ENTRY, base=ENTRY)
    assert found[0].startswith("perf-changelog.yaml: [0]: entry for quickstart-sim was edited")


def test_rewording_a_comment_of_the_base_is_rejected() -> None:
    found = problems("# new words\n" + ENTRY, base="# old words\n" + ENTRY)
    assert found == ["perf-changelog.yaml:1: line changed since main (only appending is allowed)"]


def test_new_entries_only_are_checked_for_known_keys() -> None:
    old = ENTRY.replace("quickstart-sim", "retired-curve")
    assert problems(old + SECOND, base=old) == []
    assert problems(old + SECOND.replace("musespark-*", "nope-*"), base=old)[0].startswith(
        "perf-changelog.yaml: [1].config-keys: 'nope-*' matches no recipe")


# ---------------------------------------------------------------------------------------- CLI + git


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def test_cli_against_a_base_revision(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "q.yaml").write_text("config_key: quickstart-sim\n")
    log = tmp_path / "perf-changelog.yaml"
    log.write_text(ENTRY)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "first")

    log.write_text(ENTRY + SECOND.replace("musespark-*", "quickstart-*"))
    assert cli_main(["changelog", "validate", "--base", "HEAD", str(log)]) == 0
    assert "OK, 2 entries; compared with HEAD" in capsys.readouterr().out

    log.write_text(ENTRY.replace("pull/1", "pull/2"))
    assert cli_main(["changelog", "validate", "--base", "HEAD", str(log)]) == 2
    assert "[0]: entry for quickstart-sim was edited (pr-link)" in capsys.readouterr().err

    assert cli_main(["changelog", "validate", "--base", "no-such-rev", str(log)]) == 2
    assert cli_main(["changelog", "validate", str(tmp_path / "missing.yaml")]) == 2

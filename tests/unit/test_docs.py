"""The README and `docs/` hold: the README stays a short path (at most 3,000 words), every link between the pages
resolves (file and heading), every `harness ...` command shown in a code block parses with the real command
line (a synopsis's optional `[...]` parts dropped and the first of `A|B` taken), every script or Makefile target
shown exists, and the generated pages equal their generators."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from harness.cli import _build_parser
from harness.cli_reference import reference

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def _commands(page: Path) -> list[str]:
    """The command lines of a page's code blocks (continuations joined, comments dropped)."""
    out = []
    for block in FENCE.findall(page.read_text()):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line.startswith(("harness ", "make ", "bash tools/")):
                out.append(line)
    return out


def _synopsis_to_argv(line: str) -> list[str]:
    line = line.replace("...", "")
    while re.search(r"\[[^\[\]]*\]", line):
        line = re.sub(r"\s*\[[^\[\]]*\]", "", line)
    # a placeholder (`TOKENS`, `JOB`, `A`) stands for a value: 1 parses as a number, a name or a path alike
    return [re.sub(r"^[A-Z][A-Z0-9_]*$", "1", token.split("|")[0]) for token in shlex.split(line)]


def test_the_readme_is_a_short_path() -> None:
    words = len((ROOT / "README.md").read_text().split())
    assert words <= 3000, f"README.md has {words} words; move reference material to docs/"


def test_the_command_reference_is_generated() -> None:
    assert (ROOT / "docs" / "cli.md").read_text() == reference(), \
        "regenerate: python -m harness.cli_reference > docs/cli.md"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_link_resolves(page: Path) -> None:
    broken = []
    for target in LINK.findall(FENCE.sub("", page.read_text())):
        if re.match(r"^[a-z]+:", target):
            continue   # an external address
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(target)
    assert broken == [], f"{page.name}: broken links {broken}"


def test_no_page_points_outside_the_repository() -> None:
    for page in PAGES:
        text = page.read_text()
        assert not re.search(r"\.\./shared|DOMAIN\.md|DESIGN\.md", text), page.name


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_command_shown_parses(page: Path) -> None:
    makefile = (ROOT / "Makefile").read_text()
    bad = []
    for line in _commands(page):
        argv = _synopsis_to_argv(line)
        if argv[0] == "make":
            if not re.search(rf"^{re.escape(argv[1])}:", makefile, re.M):
                bad.append(f"{line}: no such Makefile target")
            continue
        if argv[0] == "bash":
            if not (ROOT / argv[1]).is_file():
                bad.append(f"{line}: no such script")
            continue
        parser, _ = _build_parser(argv[1:])
        try:
            parser.parse_args(argv[1:])
        except SystemExit as exc:
            if exc.code != 0:
                bad.append(line)
    assert bad == [], f"{page.name}: commands that do not parse:\n" + "\n".join(bad)


def test_the_readme_s_deployment_example_is_the_shipped_recipe() -> None:
    import yaml

    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.S)
    shown = next(yaml.safe_load(b) for b in blocks if "deployment:" in b)
    shipped = yaml.safe_load((ROOT / "recipes" / "examples" / "disagg-gb300-1p1d-tp4-tp4-sim.yaml").read_text())
    assert shown == shipped

"""One name per idea: "verdict" means a point's validity verdict (valid, or INVALID with its reason codes) and
nothing else. The other judgements have their own names: a search's tested point and its outcome
(`harness.search.tested.TestedPoint`: pass, fail, inconclusive), an accuracy eval's gate (PASS, PARTIAL, FAIL,
FAILED, MISSING), AIPerf's submission check (`publishable.assess`), the SGLang judge's replies, Check 14's
results, compare's noise reading and a stall judge's `stalled_reason`.

No identifier of `harness/`, `launchers/` or `slurm/` (a name, an attribute, a function, class or argument, an
imported module or name) contains "verdict" outside `VALIDITY_MODULES`, where it names the validity verdict.

Likewise a point's target concurrency is `conc` (as InferenceX's rows and the recipe's `c28` name it), its
measured load `achieved_concurrency`: no identifier is the bare word `concurrency` (AIPerf's `--concurrency` flag
is a string, not a name).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("harness", "launchers", "slurm")
VALIDITY_MODULES = frozenset({
    "harness/point/record/validity.py",      # the validity verdict itself
    "harness/point/record/result.py",        # writes it into the record
    "harness/report/analysis/verdicts.py",   # the verdict table (valid / INVALID per point)
    "harness/report/analysis/table.py",      # the tables' "verdict" column
    "harness/report/analysis/compare.py",    # the comparison's valid -> INVALID column
    "harness/report/render/html.py",         # render the verdict table
    "harness/report/render/markdown.py",
    "harness/report/render/plots.py",
    "harness/report/results/verdicts.py",    # each exported row's validity verdict beside the rows
    "harness/report/results/export.py",      # writes it
    "harness/report/results/load.py",        # reads an exported row with its verdict
})


def identifiers(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, name) of every identifier in `tree`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.lineno, node.id
        elif isinstance(node, ast.Attribute):
            yield node.lineno, node.attr
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.lineno, node.name
        elif isinstance(node, ast.arg):
            yield node.lineno, node.arg
        elif isinstance(node, ast.Import | ast.ImportFrom):
            if isinstance(node, ast.ImportFrom) and node.module:
                yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, alias.name
                if alias.asname:
                    yield node.lineno, alias.asname


def misnamed(path: str, source: str) -> list[str]:
    """`path:line: name` of each identifier of `source` that says "verdict" where it may not."""
    if path in VALIDITY_MODULES:
        return []
    return [f"{path}:{line}: {name}" for line, name in identifiers(ast.parse(source)) if "verdict" in name.lower()]


def test_verdict_names_only_the_validity_verdict() -> None:
    found = [hit for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))
             for hit in misnamed(p.relative_to(ROOT).as_posix(), p.read_text())]
    assert found == [], "\n".join(found)


def test_the_check_finds_another_verdict() -> None:
    source = "from harness.evals.verdicts import eval_verdict\n\nclass PointVerdict: ...\n"
    assert misnamed("harness/search/tested.py", source) == [
        "harness/search/tested.py:1: harness.evals.verdicts", "harness/search/tested.py:1: eval_verdict",
        "harness/search/tested.py:3: PointVerdict"]
    assert misnamed("harness/report/analysis/verdicts.py", source) == []


def bare_concurrency(path: str, source: str) -> list[str]:
    """`path:line` of each identifier of `source` that is the bare word `concurrency` (the target is `conc`)."""
    return [f"{path}:{line}" for line, name in identifiers(ast.parse(source)) if name == "concurrency"]


def test_the_target_concurrency_is_conc() -> None:
    found = [hit for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))
             for hit in bare_concurrency(p.relative_to(ROOT).as_posix(), p.read_text())]
    assert found == [], "\n".join(found)


def test_the_check_finds_a_bare_concurrency() -> None:
    source = "def f(concurrency: int, achieved_concurrency: float) -> list[str]:\n    return ['--concurrency']\n"
    assert bare_concurrency("m.py", source) == ["m.py:1"]

"""One vocabulary for throughput: `predict`, `run`/`sweep`, `report`, `compare` and `search` print total, output and
input tokens per second per GPU in the words of `harness.vocabulary` and nowhere else spell them.

Two checks: no string in the harness's code (docstrings aside) writes a per-GPU throughput term of its own, and
every per-GPU throughput term in what the commands print is one of the vocabulary's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.vocabulary import OUTPUT_PER_GPU, THROUGHPUT_TERMS, TOTAL_PER_GPU

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "fixtures" / "results"
# any way of writing tokens per second per GPU: "total tok/s/GPU", "tokens/s/GPU", "out tokens/s per GPU", ...
PER_GPU = re.compile(r"(?:[\w.-]+ )?tok(?:en)?s?/s(?:ec)?(?:/| per )GPU", re.IGNORECASE)


def _strings(tree: ast.AST) -> list[str]:
    """Every string constant of a module but its docstrings."""
    docs: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_no_module_spells_a_throughput_term_of_its_own() -> None:
    own = ROOT / "harness" / "vocabulary.py"
    found = [f"{path.relative_to(ROOT)}: {match!r}"
             for path in sorted((ROOT / "harness").rglob("*.py")) if path != own
             for text in _strings(ast.parse(path.read_text()))
             for match in PER_GPU.findall(text)]
    assert not found, "throughput per GPU spelled outside harness.vocabulary:\n" + "\n".join(found)


def _terms(text: str) -> set[str]:
    return {m.strip() for m in PER_GPU.findall(text)}


def _printed(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert cli_main(argv) == 0
    return capsys.readouterr().out


def test_every_command_prints_throughput_in_the_shared_words(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from harness.commands.running.run import point_table
    from harness.search.outcome import render_summary

    printed = {
        "predict": _printed(["predict", str(ROOT / "recipes" / "quickstart-sim.yaml"), "--points", "c2"], capsys),
        "report": _printed(["report", str(RESULTS / "sim-run"), "--out", str(tmp_path / "report")], capsys),
        "compare": _printed(["compare", str(RESULTS / "sim-run"), str(RESULTS / "sim-run-new")], capsys),
        "run": point_table(RESULTS / "sim-run" / "quickstart-sim" / "conc4"),
        "report.md": (tmp_path / "report" / "report.md").read_text(),
        "report.html": (tmp_path / "report" / "report.html").read_text(),
    }
    doc = {"slo": ["ttft_p90<=10"], "points": [
        {"conc": 2, "metrics": {"ttft_p90": 0.3}, "uncertain": False, "valid": True, "invalid_reasons": [],
         "outcome": "pass", "meets_slo": True}],
           "boundary_conc": 2, "upper_bound_reached": True, "first_failing_conc": None, "agents_per_gpu": 2.0,
           "agents_per_node": 2.0, "agents_per_kw": None, "agents_per_kw_reason": "simulated",
           "uncertain": {"boundary": False}, "complete": True}
    printed["search"] = render_summary(doc)
    for command, text in printed.items():
        assert _terms(text) <= set(THROUGHPUT_TERMS), f"{command} prints {_terms(text) - set(THROUGHPUT_TERMS)}"
    # the tables that show throughput name both figures in the same words
    for command in ("predict", "report", "run", "report.html"):
        assert {TOTAL_PER_GPU, OUTPUT_PER_GPU} <= _terms(printed[command]), command
    assert TOTAL_PER_GPU in _terms(printed["compare"]) and TOTAL_PER_GPU in _terms(printed["report.md"])

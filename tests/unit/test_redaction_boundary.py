"""Secrets leave the harness at one boundary: the writers and printers of `harness/artifacts.py` (files, logs,
`--json`, the console) apply `harness.redact` themselves, so no other module of `harness/`, `launchers/` or
`slurm/` calls a redaction function; it passes the real values to a writer.

`EXCEPTIONS` would list a call that stays elsewhere, with why it is not a writer's job; it is empty, and may only
stay so or shrink: a listed call that no longer exists fails the test too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import harness.redact

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("harness", "launchers", "slurm")
# The modules that are the boundary: the rule itself, its syntax forms, and the writers that apply it.
BOUNDARY = frozenset({"harness/redact.py", "harness/redact_forms.py", "harness/redact_plain.py",
                      "harness/artifacts.py"})

# The functions of `harness.redact` that mask secrets (or register values to mask everywhere). The rule's
# judgements (`is_secret_name`, `override_holds_secret`), its configuration (`add_secret_names`) and what puts
# sealed values back (`unseal`, `sealed_numbers`) are not redaction.
REDACTION = frozenset({"redact_text", "redact_argv", "redact_env", "redact_data", "redact_override",
                       "seal", "secret_values", "remember", "scrub_remembered"})

# (module, function): why it is not the writers' job.
EXCEPTIONS: dict[tuple[str, str], str] = {}


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _redaction_calls(path: Path) -> set[str]:
    """The redaction functions of `harness.redact` this module imports or calls (`redact.redact_text(...)`)."""
    found: set[str] = set()
    aliases: set[str] = set()   # names under which the module `harness.redact` is bound
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module == "harness.redact":
            found.update(a.name for a in node.names if a.name in REDACTION)
        elif isinstance(node, ast.ImportFrom) and node.module == "harness":
            aliases.update(a.asname or a.name for a in node.names if a.name == "redact")
        elif isinstance(node, ast.Import):
            aliases.update(a.asname or a.name for a in node.names if a.name == "harness.redact")
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and node.attr in REDACTION:
            base = ast.unparse(node.value)
            if base in aliases or base == "harness.redact":
                found.add(node.attr)
    return found


def _calls() -> set[tuple[str, str]]:
    calls: set[tuple[str, str]] = set()
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        if rel not in BOUNDARY:
            calls.update((rel, fn) for fn in _redaction_calls(path))
    return calls


def test_the_redaction_functions_exist() -> None:
    assert all(callable(getattr(harness.redact, fn, None)) for fn in REDACTION)


def test_only_the_writers_redact() -> None:
    stray = sorted(_calls() - EXCEPTIONS.keys())
    assert not stray, ("redaction outside harness/artifacts.py (pass the real values to its writers, or list the "
                       f"call in EXCEPTIONS with why it is not an output): {stray}")


def test_every_exception_still_exists() -> None:
    gone = sorted(EXCEPTIONS.keys() - _calls())
    assert not gone, f"listed in EXCEPTIONS but no longer called (remove the entry): {gone}"


def test_the_check_sees_a_stray_call(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("from harness import redact as r\nfrom harness.redact import is_secret_name, seal\n"
                      "def f(x):\n    return r.redact_text(x), seal(x), is_secret_name(x)\n")
    assert _redaction_calls(module) == {"redact_text", "seal"}

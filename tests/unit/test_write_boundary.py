"""Every file the harness writes goes through `harness/artifacts.py`: its writers redact what may hold a secret
(`write_json`, `write_text`, `append_text`, `write_command`) and write the harness's own bytes atomically
(`write_bytes`, `write_figure`). No other module of `harness/`, `launchers/` or `slurm/` opens a file for
writing, writes a path's text or bytes, dumps JSON to a file, copies a file or saves a figure.

`EXCEPTIONS` lists the writes that stay elsewhere, each with why the writer's job is done another way; the list
may only shrink: a listed write that no longer exists fails the test too.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("harness", "launchers", "slurm")
BOUNDARY = "harness/artifacts.py"

WRITE_METHODS = frozenset({"write_text", "write_bytes", "savefig", "to_csv"})
WRITE_FUNCTIONS = frozenset({"json.dump", "os.write", "os.pwrite", "shutil.copy", "shutil.copy2", "shutil.copyfile",
                             "shutil.copytree"})

# (module, write): why it is not `harness/artifacts.py`'s to write.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("launchers/process_group.py", "open:ab"):
        "a server's or client's own output, the child's stdout and stderr; scrubbed when it stops (`scrub_logs`)",
    ("harness/sim/batching/truth.py", "open:a"):
        "the simulator's truth log, written line by line by the serving process for its whole life",
    ("harness/power/sampler.py", "open:w"):
        "the NVML samples (numbers the harness measured), streamed as they come for the point's whole window",
    ("harness/point/state/status_reserve.py", "open:wb"):
        "the space reserved for the final status.json, filled before a disk can run out (no text of its own)",
    ("harness/point/state/status_reserve.py", "os.write"):
        "the final status into the reserved file, its text redacted by `json_text` before it is written",
    ("harness/report/results/export.py", "shutil.copyfile"):
        "a run's own file staged for export as written (redacted when it was written)",
    ("harness/tokenizer/__init__.py", "shutil.copy2"):
        "a tokenizer's own files copied into the local cache as they are",
    ("harness/tokenizer/__init__.py", "write_text"):
        "the cache's ref file: a revision hash",
    ("harness/check/changed.py", "write_bytes"):
        "a recipe at a git revision, restored into a temporary directory for the loader to read back",
    ("slurm/jobs.py", "open:w"): "an empty lock file",
    ("slurm/images.py", "open:w"): "an empty lock file",
}


def _modules() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _mode(call: ast.Call) -> str | None:
    """The mode of an `open`/`fdopen` call when it writes (a constant with w, a, x or +), else None."""
    given = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    if isinstance(given, ast.Constant) and isinstance(given.value, str) and set(given.value) & set("wax+"):
        return given.value
    return None


def writes(source: str) -> set[str]:
    """The kinds of file writes in `source`: `open:<mode>`, a write method (`write_text`, `savefig`, ...) called
    on anything but the artifacts module, or a writing function (`json.dump`, `shutil.copyfile`, ...)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        if name in ("open", "os.fdopen") or name.endswith(".open"):
            mode = _mode(node)
            if mode is not None:
                found.add(f"open:{mode}")
        elif name in WRITE_FUNCTIONS:
            found.add(name)
        elif isinstance(node.func, ast.Attribute) and node.func.attr in WRITE_METHODS \
                and ast.unparse(node.func.value) != "artifacts":
            found.add(node.func.attr)
    return found


def _writes() -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        if rel != BOUNDARY:
            out.update((rel, kind) for kind in writes(path.read_text()))
    return out


def test_only_the_artifact_writers_write() -> None:
    stray = sorted(_writes() - EXCEPTIONS.keys())
    assert not stray, ("a file written outside harness/artifacts.py (use its writers, or list the write in "
                       f"EXCEPTIONS with why): {stray}")


def test_every_exception_still_exists() -> None:
    gone = sorted(EXCEPTIONS.keys() - _writes())
    assert not gone, f"listed in EXCEPTIONS but no longer written (remove the entry): {gone}"


def test_the_check_sees_each_kind_of_write() -> None:
    source = ("import json, shutil\nfrom pathlib import Path\n"
              "def f(p, fig, data):\n"
              "    open(p, 'w').write('x'); Path(p).open(mode='a'); open(p).read(); open(p, 'rb')\n"
              "    p.write_text('x'); fig.savefig(p); json.dump(data, p); shutil.copyfile(p, p)\n"
              "    artifacts.write_text(p, 'x')\n")
    assert writes(source) == {"open:w", "open:a", "write_text", "savefig", "json.dump", "shutil.copyfile"}

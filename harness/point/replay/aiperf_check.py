"""Before any server starts: is the AIPerf client there and able to run?

A point whose client cannot start wastes a whole model load (minutes on a GPU recipe), so the point runner
asks first. `check_aiperf(executable)` refuses, with one line naming the file:

- an executable that is not found (not a path that exists, not on PATH) or not executable;
- a script whose interpreter (`#!` line) is missing or not executable (a moved or deleted virtualenv);
- an interpreter that cannot import the `aiperf` package (a broken or partial install).

It does not run AIPerf itself (importing it takes seconds); it runs the interpreter once to locate the
package and name the distribution that installed it (`agentx-harness 1.0.12`, or upstream `aiperf`), well under
a second, and remembers a good answer for the life of the process.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from harness.errors import UserError

HINT = "install the harness with its pinned AIPerf (`make setup`, or `pip install -e .`)"
_FIND = ("import importlib.util, importlib.metadata as m, sys\n"
         "if importlib.util.find_spec('aiperf') is None: sys.exit(3)\n"
         "d = (m.packages_distributions().get('aiperf') or ['aiperf'])[0]\n"
         "print(d, m.version(d))")


@dataclass(frozen=True)
class ClientTool:
    """The distribution that provides the `aiperf` a point runs, e.g. `agentx-harness` 1.0.12."""

    name: str | None
    version: str | None

    def to_json(self) -> dict[str, str | None]:
        return {"name": self.name, "version": self.version}


def check_aiperf(executable: str) -> ClientTool:
    """Refuse an AIPerf executable that cannot run (see the module docstring); one line naming the file. Returns
    the distribution that provides it (unknown for a compiled executable)."""
    return _check(executable)


@cache
def _check(executable: str) -> ClientTool:
    path = Path(executable) if os.sep in executable else _on_path(executable)
    if not path.is_file():
        raise UserError(f"{path}: AIPerf not found; {HINT}")
    if not os.access(path, os.X_OK):
        raise UserError(f"{path}: AIPerf is not executable; {HINT}")
    interpreter = _interpreter(path)
    if interpreter is None:
        return ClientTool(None, None)  # a compiled executable: nothing more to check without running it
    program = Path(interpreter[0]) if os.sep in interpreter[0] else Path(shutil.which(interpreter[0]) or interpreter[0])
    if not program.is_file() or not os.access(program, os.X_OK):
        raise UserError(f"{path}: AIPerf's interpreter {program} is missing or not executable; {HINT}")
    if program.name.startswith("python"):
        try:
            done = subprocess.run([str(program), *interpreter[1:], "-c", _FIND], capture_output=True, timeout=60,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise UserError(f"{path}: AIPerf's interpreter {program} does not run ({exc}); {HINT}") from None
        if done.returncode != 0:
            raise UserError(f"{path}: AIPerf's interpreter {program} cannot import the aiperf package; {HINT}")
        words = done.stdout.decode(errors="replace").split()
        if len(words) == 2:
            return ClientTool(words[0], words[1])
    return ClientTool(None, None)


def _on_path(name: str) -> Path:
    found = shutil.which(name)
    if found is None:
        raise UserError(f"{name}: AIPerf not found (not on PATH, nor beside this Python); {HINT}")
    return Path(found)


def _interpreter(path: Path) -> list[str] | None:
    """The `#!` command of a script (e.g. ['/venv/bin/python3']), or None for a binary."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(256)
    except OSError as exc:
        raise UserError(f"{path}: AIPerf is not readable ({exc.strerror or exc}); {HINT}") from None
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    words = shlex.split(line) if line else []
    if not words:
        raise UserError(f"{path}: AIPerf's `#!` line names no interpreter; {HINT}")
    if Path(words[0]).name == "env" and len(words) > 1:
        return words[1:]
    return words

"""The YAML reader's bounds: deep flow nesting, huge files, FIFOs and devices are refused quickly and without
reading them; bools are not numbers; integers keep their digit cap in `--set`; control characters in paths
are refused. Each case is one line and exit status 2 (`harness plan`).

Time bounds here are generous (seconds, not the sub-second the reader achieves): before these bounds the
same inputs took 10 s to forever."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.inputs import yaml_input
from tests.unit.test_bad_input import BASE, ROOT, one_error_line, recipe, run


def _plan_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *extra: str) -> tuple[str, float]:
    path = recipe(tmp_path, text)
    start = time.monotonic()
    line = one_error_line(*run(capsys, "plan", path, *extra))
    return line, time.monotonic() - start


@pytest.mark.parametrize(("text", "expected"), [
    ("a: " + "[" * 5000, r"r\.yaml:1: not valid YAML: nested deeper than 64 levels"),
    ("a: " + "{" * 2000, r"r\.yaml:1: not valid YAML: nested deeper than 64 levels"),
    ("a: " + "x" * 5_000_000, r"r\.yaml: 5000003 characters, larger than 64 KiB"),
])
def test_slow_yaml_is_refused_before_parsing(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                            expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def parsed(*_: object, **__: object) -> None:
        raise AssertionError("the YAML parser ran")

    monkeypatch.setattr(yaml_input._Loader, "__init__", parsed)   # bounded by work, not by a clock
    line, _ = _plan_line(tmp_path, capsys, text)
    assert re.search(expected, line), line


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("ready_timeout_s: 120", "ready_timeout_s: true", r"server\.ready_timeout_s: .*got a boolean \(True\)"),
    ("seed: 42", "seed: true", r"client\.seed: .*got a boolean \(True\)"),
    ("max-running-requests: 32", "max-running-requests: -5", r"max-running-requests.*at least 1, got -5"),
    ("max-running-requests: 32", "max-running-requests: " + "9" * 30, r"max-running-requests.*below 2\*\*63, got 30 digits"),
    ("  path: demo/agentic-coder-8b", '  path: "demo/agentic\\ncoder"', r"model\.path: must not contain control characters"),
    ("traces: traces/quickstart ", 'traces: "traces/quick\\tstart" ', r"client\.traces: must not contain control"),
])
def test_invalid_values_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str,
                                    expected: str) -> None:
    assert old in BASE
    line, _ = _plan_line(tmp_path, capsys, BASE.replace(old, new))
    assert re.search(expected, line), line


def test_set_keeps_the_files_digit_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = recipe(tmp_path, BASE)
    line = one_error_line(*run(capsys, "plan", path, "--set", "args.max-running-requests=" + "9" * 34))
    assert "an integer of 34 digits (at most 30)" in line, line
    line = one_error_line(*run(capsys, "plan", path, "--set", "client.seed=true"))
    assert "client.seed" in line and "boolean" in line, line


def _harness(tmp: Path, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The CLI in a child with its address space capped at 1 GiB (so a reader that reads a device whole
    fails there instead of exhausting this machine)."""
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30));"
            "from harness.cli import main; sys.exit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=timeout,
                          cwd=tmp, env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_a_fifo_as_the_recipe_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "r.yaml"
    os.mkfifo(fifo)
    done = _harness(tmp_path, "plan", str(fifo), timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == f"error: {fifo}: is a FIFO; expected a recipe file", done.stderr


def test_a_device_as_the_recipe_is_refused(tmp_path: Path) -> None:
    done = _harness(tmp_path, "plan", "/dev/zero", timeout=30)
    assert done.returncode == 2 and "/dev/zero: is a character device; expected a recipe file" in done.stderr, done.stderr


def test_a_trace_dir_symlinked_to_dev_zero_is_refused_without_reading_it(tmp_path: Path) -> None:
    (tmp_path / "r.yaml").write_text(BASE)
    (tmp_path / "traces").mkdir()
    (tmp_path / "traces" / "quickstart").symlink_to("/dev/zero")
    done = _harness(tmp_path, "traces", "validate", str(tmp_path / "traces" / "quickstart"), timeout=60)
    assert done.returncode == 2, done.stderr
    assert "is a character device" in done.stderr and "Traceback" not in done.stderr, done.stderr
    done = _harness(tmp_path, "run", str(tmp_path / "r.yaml"), "--point", "c2", "--out", str(tmp_path / "runs"),
                    timeout=60)
    assert done.returncode == 2, done.stderr
    assert "/dev/zero" in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    assert not list((tmp_path / "runs").rglob("server.log"))   # refused before any server started

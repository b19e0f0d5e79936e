"""A GPU recipe run on a machine that cannot start its engine: the console says why, in the server log's own
words, names the log, and gives the simulator rehearsal; the rehearsal it gives is a command that plans and passes
preflight here."""

from __future__ import annotations

import importlib.util
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECIPE = "recipes/musespark-fp4-h200-sglang-agentic-dflash.yaml"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("sglang") is not None, reason="sglang is installed here"),
]


def _harness(args: list[str], path_dir: Path) -> subprocess.CompletedProcess[str]:
    """`harness ARGS` from the repository root, with a `python3` on PATH that has no sglang (this interpreter)."""
    env = {**os.environ, "PATH": f"{path_dir}{os.pathsep}{os.environ.get('PATH', '')}", "HARNESS_PROGRESS": "plain"}
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    found = tmp_path / "bin"
    found.mkdir()
    (found / "python3").symlink_to(sys.executable)
    return found


def test_a_server_without_its_engine_says_why_and_suggests_the_rehearsal(tmp_path: Path, bin_dir: Path) -> None:
    tokenizer = ROOT / "harness" / "tokenizer" / "demo"
    done = _harness(["run", RECIPE, "--point", "c1", "--out", str(tmp_path / "runs"), "--set",
                     "client.traces=traces/quickstart", "--set", f"client.tokenizer={tokenizer}", "--duration", "20",
                     "--unofficial"], bin_dir)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "failed (server_exited: server exited with status 1 before it was ready; server.log: " in out
    logs = list((tmp_path / "runs").rglob("server.log"))
    assert len(logs) == 1
    assert f"server.log ({logs[0]}) ends with:" in out
    assert "No module named 'sglang'" in out.split("ends with:", 1)[1]
    assert "this machine cannot start the engine: SGLang is not installed where the server runs (No module named " \
           "'sglang')" in out
    line = next(ln for ln in out.splitlines() if "rehearse it on the simulator instead" in ln)
    command = line.split(": ", 1)[1]
    assert command == (f"harness run {RECIPE} --point c1 --set client.traces=traces/quickstart --set "
                       f"client.tokenizer={tokenizer} --set client.duration_s=20 --set engine=sim --unofficial")
    # the suggested command plans on the simulator, and its corpus and tokenizer pass the local preflight
    words = shlex.split(command)
    planned = _harness(["plan", *words[2:]], bin_dir)
    assert planned.returncode == 0, planned.stderr
    assert "-m harness.sim" in planned.stdout
    from harness import preflight
    from harness.recipe.points import load_plans

    sets = [words[i + 1] for i, w in enumerate(words) if w == "--set"]
    recipe, plans = load_plans(ROOT / RECIPE, ["c1"], sets, unofficial=True)
    report = preflight.local(recipe, plans, str(ROOT / RECIPE), tmp_path / "empty")
    assert report.ok, [f.message for f in report.failures()]


def test_a_refused_preflight_where_the_engine_cannot_start_gives_the_rehearsal(tmp_path: Path,
                                                                               bin_dir: Path) -> None:
    done = _harness(["run", RECIPE, "--point", "c4", "--out", str(tmp_path / "runs"),
                     "--corpus-cache", str(tmp_path / "empty")], bin_dir)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0].startswith("error: preflight: ")
    assert lines[1] == ("hint: this machine cannot start the engine (python3 has no module named 'sglang'); rehearse "
                        f"the point on the simulator instead: harness run {RECIPE} --point c4 --set engine=sim --set "
                        "client.traces=traces/quickstart --duration 20 --unofficial")

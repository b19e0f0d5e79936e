"""Every command of the README either runs here, as written, or is named with where it runs instead.

The README's shell blocks are read as a user copies them (continuation lines joined, comments dropped). A
command that can run on a machine without a GPU, a cluster or the local Slurm is run exactly as written, from a
fresh working directory that holds the repository's `recipes/` and `clusters/` (so its `runs/` lands there), and
must exit 0. Every other command must be listed below with the reason it cannot run here and the test that runs
it elsewhere; a README command in neither list fails the test, so a new command cannot go untried.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

RUNS_HERE: tuple[str, ...] = (
    "harness plan recipes/musespark-fp4-h200-sglang-agentic-dflash.yaml --point c4",
    "harness run recipes/musespark-fp4-h200-sglang-agentic-dflash.yaml --point c4 --set engine=sim "
    "--set client.traces=traces/quickstart --duration 20 --unofficial",
    "harness plan recipes/examples/disagg-gb300-1p1d-tp4-tp4-sim.yaml",
)

ELSEWHERE: dict[str, str] = {
    "make demo": "the quick start (about 3.5 minutes): its recipe's points run in tests/integration "
                 "(test_eval_runner.py, test_inferencex_reference.py) and on Slurm with every lane starting the "
                 "window at once, as make demo runs them, in tests/slurm/test_sweep.py",
    "make test": "the quick start itself: CI's .ci/run calls make test-all, which runs its tests and the rest",
    "harness run recipes/musespark-fp4-h200-sglang-agentic-dflash.yaml --point c4 --repeat 3":
        "needs an H200 node (the rehearsal above runs the same point on the simulator)",
    "harness run recipes/musespark-fp4-h200-sglang-agentic-dflash.yaml --point c4 --set args.chunked-prefill-size=16384":
        "needs an H200 node",
    "harness compare runs/musespark-fp4-h200-sglang-agentic-dflash --variant chunked-prefill-size=16384":
        "compares the two GPU runs above; compare on simulator runs is tests/integration's",
    "V=runs/quickstart-sim/variants/burst_phase_starts=true,warmup_requests_per_lane=1,grace_s=20,duration_s=45":
        "names make demo's variant directory for the command below",
    "harness inspect $V/conc8 --vs $V/conc4":
        "inspects make demo's points: tests/unit/test_inspect_point.py runs the command a sweep prints on the demo's "
        "own c4 and c8 (tests/fixtures/inspect/demo), and the Chromium test opens its page",
    "harness profile clusters/gb300.yaml": "the shipped profile is a template whose SITE values a site fills in",
    "harness traces stage recipes/musespark-fp4-gb300-sglang-agentic-dflash.yaml --to /lustre/harness/corpora":
        "downloads the AgentX corpus from the Hugging Face hub",
    "harness preflight recipes/musespark-fp4-gb300-sglang-agentic-dflash.yaml --cluster clusters/gb300.yaml":
        "needs a GB300 cluster",
    "harness submit recipes/musespark-fp4-gb300-sglang-agentic-dflash.yaml --cluster clusters/gb300.yaml --wait":
        "needs a GB300 cluster",
    "harness follow JOB": "follows a submitted job (tests/slurm)",
    "bash tools/slurm-local-setup.sh start": "starts the local Slurm as root (.ci/run does, before the tests)",
    "harness preflight recipes/quickstart-sim.yaml --cluster clusters/local-ci.yaml": "the local Slurm (tests/slurm)",
    "harness submit recipes/quickstart-sim.yaml --cluster clusters/local-ci.yaml --wait": "the local Slurm (tests/slurm)",
    "harness sweep recipes/examples/disagg-gb300-1p1d-tp4-tp4-sim.yaml":
        "every process of a deployment on this host: tests/integration/test_submission_grade.py runs its c4",
    "harness submit recipes/examples/disagg-gb300-1p1d-tp4-tp4-sim.yaml --cluster clusters/local-ci.yaml --wait":
        "the local Slurm (tests/slurm)",
}


def readme_commands(text: str) -> list[str]:
    """The commands of the README's plain code blocks, continuation lines joined and comments dropped."""
    blocks: list[list[str]] = []
    fence: str | None = None   # the open block's language ("" for a plain block)
    for line in text.splitlines():
        if line.startswith("```"):
            fence = line[3:].strip() if fence is None else None
            if fence == "":
                blocks.append([])
        elif fence == "":
            blocks[-1].append(line)
    commands: list[str] = []
    for block in blocks:
        for line in re.sub(r"\\\n\s*", "", "\n".join(block)).splitlines():
            command = line.split("  #")[0].strip()
            if command and not command.startswith("#"):
                commands.append(re.sub(r"\s+", " ", command))
    return commands


def test_every_readme_command_is_run_here_or_named_with_where_it_runs() -> None:
    commands = readme_commands(README.read_text())
    assert commands, "no command blocks found in the README"
    unknown = [c for c in commands if c not in RUNS_HERE and c not in ELSEWHERE]
    assert not unknown, f"README commands neither run here nor named with where they run: {unknown}"
    gone = [c for c in (*RUNS_HERE, *ELSEWHERE) if c not in commands]
    assert not gone, f"commands listed here that the README no longer has: {gone}"


@pytest.mark.parametrize("command", RUNS_HERE, ids=lambda c: " ".join(c.split()[:3]))
def test_a_readme_command_runs_as_written(command: str, tmp_path: Path) -> None:
    for name in ("recipes", "clusters"):
        (tmp_path / name).symlink_to(ROOT / name)
    argv = shlex.split(command)
    harness = Path(sys.executable).with_name("harness")
    done = subprocess.run([str(harness), *argv[1:]], cwd=tmp_path, env=os.environ.copy(), capture_output=True,
                          text=True, timeout=900, check=False)
    assert done.returncode == 0, f"{command}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    if argv[1] == "run":
        (result,) = (tmp_path / "runs").rglob("point_result.json")
        assert '"completed"' in result.read_text()

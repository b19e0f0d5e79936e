"""Every next step the CLI prints runs as printed and does what it says.

A sweep and a run of short variants of the quickstart (the code path `make demo` takes: a sweep of a variant with
the report at its end) print how to compare what they measured; `compare RUN --variant NAME` without the recipe's
own points prints the same. Each printed command is taken from the real output and run from the same working
directory: the compare of two variants exits 0 and prints their point-by-point comparison; the command that runs
the recipe as written plans here (the test marked long runs it, then the `compare --variant` printed after it).
The rehearsal a GPU recipe prints where its engine cannot start is the README's rehearsal command, which
tests/integration/test_readme_commands.py runs as written.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RECIPE = "recipes/quickstart-sim.yaml"
SHORT = ["--duration", "20", "--set", "client.warmup_requests_per_lane=1"]   # two short variants of c2
DONE = (0, 3)   # a completed point, valid or invalid (too few requests in a short window): both print the hint
FIRST = "run them first: "
BESIDE = "beside it: "


@dataclass
class Steps:
    cwd: Path
    sweep: str      # the output of the variant sweep
    run: str        # the output of the variant run beside it


def harness(cwd: Path, command: str | list[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """`harness ...` as a user types it, from `cwd`."""
    argv = shlex.split(command) if isinstance(command, str) else command
    assert argv[0] == "harness", argv
    exe = Path(sys.executable).with_name("harness")
    env = {**os.environ, "HARNESS_PROGRESS": "plain"}
    return subprocess.run([str(exe), *argv[1:]], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def hint_of(out: str) -> str:
    """The last line that says how to compare a variant."""
    return next(ln for ln in reversed(out.splitlines()) if "to compare the variant with" in ln)


@pytest.fixture(scope="module")
def steps(tmp_path_factory: pytest.TempPathFactory) -> Steps:
    cwd = tmp_path_factory.mktemp("next-steps")
    for name in ("recipes", "clusters"):
        (cwd / name).symlink_to(ROOT / name)
    sweep = harness(cwd, ["harness", "sweep", RECIPE, "--points", "c2", *SHORT, "--set",
                          "client.burst_phase_starts=true"])
    assert sweep.returncode in DONE, sweep.stdout[-3000:] + sweep.stderr[-3000:]
    run = harness(cwd, ["harness", "run", RECIPE, "--point", "c2", *SHORT])
    assert run.returncode in DONE, run.stdout[-3000:] + run.stderr[-3000:]
    return Steps(cwd, sweep.stdout, run.stdout)


def test_a_variant_alone_names_the_baseline_run_and_the_compare_after_it(steps: Steps) -> None:
    hint = hint_of(steps.sweep)
    first, then = hint.split(FIRST, 1)[1].split("; then: ", 1)
    assert first == f"harness sweep {RECIPE} --points c2 --out runs"
    variant = shlex.split(then)[-1]
    assert then == f"harness compare runs/quickstart-sim --variant {variant}"
    assert (steps.cwd / "runs" / "quickstart-sim" / "variants" / variant / "conc2" / "point_result.json").is_file()
    # the recipe as written plans here (its run is the long test below)
    planned = harness(steps.cwd, ["harness", "plan", RECIPE, "--point", "c2"])
    assert planned.returncode == 0, planned.stderr
    assert "-m harness.sim" in planned.stdout


def test_a_second_variant_names_the_compare_with_the_first_and_it_runs(steps: Steps) -> None:
    hint = hint_of(steps.run)
    command = hint.split(BESIDE, 1)[1]
    a, b = shlex.split(command)[2:]
    assert "burst_phase_starts=true" in a and "burst_phase_starts" not in b
    done = harness(steps.cwd, command)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^\s*2\s+\S", done.stdout, re.MULTILINE), done.stdout   # c2 compared, point by point
    assert "total tok/s/GPU" in done.stdout


def test_compare_without_the_recipes_own_points_gives_the_compare_that_runs(steps: Steps) -> None:
    variant = Path(shlex.split(hint_of(steps.run).split(BESIDE, 1)[1])[-1]).name
    refused = harness(steps.cwd, ["harness", "compare", "runs", "--variant", variant])
    assert refused.returncode == 2
    hint = refused.stderr.splitlines()[-1]
    assert hint.startswith("hint: no results of the recipe as written")
    command = hint.split(BESIDE, 1)[1]
    done = harness(steps.cwd, command)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "== quickstart-sim" in done.stdout


def test_the_rehearsal_a_gpu_recipe_prints_is_the_readme_command_run_as_written() -> None:
    from harness.commands.running.rehearsal import rehearsal_command
    from harness.recipe.points import load_plans
    from tests.integration.test_readme_commands import RUNS_HERE

    gpu = "recipes/musespark-fp4-h200-sglang-agentic-dflash.yaml"
    recipe, _ = load_plans(ROOT / gpu, ["c4"], [], unofficial=False)
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        command = rehearsal_command("run", gpu, recipe, [], ["c4"])
    finally:
        os.chdir(cwd)
    assert command in RUNS_HERE


@pytest.mark.long
def test_the_baseline_run_then_compare_variant_run_as_printed(steps: Steps) -> None:
    first, then = hint_of(steps.sweep).split(FIRST, 1)[1].split("; then: ", 1)
    baseline = harness(steps.cwd, first, timeout=900)
    assert baseline.returncode == 0, baseline.stdout[-3000:] + baseline.stderr[-3000:]
    done = harness(steps.cwd, then)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "A = runs/quickstart-sim as the recipe is written" in done.stdout
    assert re.search(r"^\s*2\s+\S", done.stdout, re.MULTILINE), done.stdout

"""The simulator rehearsal of a recipe's points: the exact command that runs them on this machine without a GPU
(the same server argv on the embedded simulator, a local corpus and a short window; results labelled SIMULATED
and unofficial), suggested where the recipe's engine cannot start here."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.recipe.schema import Recipe

REHEARSAL_WINDOW_S = 20.0
SHIPPED_CORPUS = Path("recipes") / "traces" / "quickstart"   # the repository's synthetic agentic corpus
LOCAL_ONLY = ("public-dataset:", "hf-weka-dataset:", "hf:")   # corpora that must be staged first


def local_corpus(recipe_path: str) -> str | None:
    """The shipped quickstart corpus as a recipe at `recipe_path` names it (recipe-relative), if it is here."""
    recipe_dir = Path(recipe_path).parent
    if (recipe_dir / "traces" / "quickstart").is_dir():
        return "traces/quickstart"
    if SHIPPED_CORPUS.is_dir():
        return os.path.relpath(SHIPPED_CORPUS.resolve(), recipe_dir.resolve())
    return None


def rehearsal_command(command: str, recipe_path: str, recipe: Recipe, overrides: Sequence[str],
                      points: Sequence[str] = ()) -> str:
    """`harness run RECIPE --point c4 --set engine=sim [--set client.traces=traces/quickstart] --duration 20
    --unofficial`: `recipe` is the recipe with `overrides` applied; the user's own overrides are kept (but an
    engine). A pinned corpus that must be staged first is replaced by the shipped quickstart corpus, unless the
    recipe names its own `sim_traces`."""
    sets = [o for o in overrides if o.split("=", 1)[0].strip() != "engine"] + ["engine=sim"]
    corpus = local_corpus(recipe_path)
    if recipe.sim_traces is None and recipe.client.traces.startswith(LOCAL_ONLY) and corpus is not None:
        sets.append(f"client.traces={corpus}")
    argv = ["harness", command, recipe_path]
    if points:
        argv += ["--point", points[0]] if command == "run" else ["--points", *points]
    for setting in sets:
        argv += ["--set", setting]
    if recipe.client.duration_s > REHEARSAL_WINDOW_S:
        argv += ["--duration", f"{REHEARSAL_WINDOW_S:g}"]
    return shlex.join([*argv, "--unofficial"])


def engine_unavailable(launcher: str) -> str | None:
    """Why the recipe's engine cannot start here with `launcher`, where that can be seen at once: the launcher's
    program is not installed, or (local) the `python3` the server runs with has no `sglang`. None: it may start."""
    import shutil
    import subprocess

    program = {"local": "python3", "docker": "docker", "enroot": "enroot", "apptainer": "apptainer",
               "pyxis": "srun"}.get(launcher)
    if program is None:
        return None
    if shutil.which(program) is None:
        return f"{program} is not installed here"
    if launcher != "local":
        return None
    try:
        found = subprocess.run([program, "-c", "import importlib.util, sys; "
                                           "sys.exit(importlib.util.find_spec('sglang') is None)"],
                               capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return "python3 has no module named 'sglang'" if found.returncode == 1 else None


def rehearsal_hint(launcher: str, rehearse: str | None) -> str | None:
    """Where the engine could not start here anyway (`engine_unavailable`), the line that says so and gives the
    simulator rehearsal `rehearse`; None otherwise."""
    why = engine_unavailable(launcher) if rehearse else None
    if why is None:
        return None
    return f"this machine cannot start the engine ({why}); rehearse the point on the simulator instead: {rehearse}"

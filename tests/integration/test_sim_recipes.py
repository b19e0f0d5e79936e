"""Every shipped recipe's server command, planned with engine=sim, runs on the simulator unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.sim.frontend.cli import build_parser
from tests.integration.test_sim_server import MSGS, Sim

ROOT = Path(__file__).resolve().parents[2]
RECIPES = sorted((ROOT / "recipes").glob("musespark-*.yaml"))


def plan(recipe: Path) -> list[dict[str, Any]]:
    out = subprocess.run(
        [sys.executable, "-m", "harness", "plan", str(recipe), "--json", "--set", "engine=sim"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )
    points: list[dict[str, Any]] = json.loads(out.stdout)["points"]
    return points


@pytest.mark.parametrize("recipe", RECIPES, ids=[r.stem for r in RECIPES])
def test_every_point_parses_with_the_simulator(recipe: Path) -> None:
    points = plan(recipe)
    assert points
    for p in points:
        argv = p["server"]["argv"]
        assert argv[:3] == ["python3", "-m", "harness.sim"], argv[:3]
        version = p["server"]["env"].get("HARNESS_SIM_SGLANG_VERSION")
        build_parser(version).parse_args(argv[3:])


def test_gb300_c28_runs_unchanged_with_golden_acceptance() -> None:
    recipe = next(r for r in RECIPES if "gb300" in r.stem)
    point = next(p for p in plan(recipe) if p["name"] == "c28")
    argv = list(point["server"]["argv"][3:])
    for flag in ("--model-path", "--served-model-name", "--port"):
        i = argv.index(flag)
        del argv[i : i + 2]  # Sim supplies its own name and a free port; the rest is the planned command
    env = {k: v for k, v in point["server"]["env"].items() if k.startswith(("SGLANG_", "HARNESS_"))}
    s = Sim(argv, env)
    try:
        s.wait_health()
        for _ in range(2):
            assert s.post({"messages": MSGS, "max_tokens": 400, "ignore_eos": True})[0] == 200
        info = json.loads(s.get("/server_info")[1])
        assert info["hicache_write_policy"] == "write_back" and info["hicache_size"] == 160
        assert info["simulator"]["profile"] == "gb300-tp4"
        assert abs(info["internal_states"][0]["avg_spec_accept_length"] - 4.05) < 0.2
    finally:
        s.stop()

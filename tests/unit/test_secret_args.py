"""The server's key is held apart from its command: a plan carries `argv` without it and `secret_args` beside it,
joined only where a process starts; the sealed Slurm plan carries neither value and the job gets it back whole."""

from __future__ import annotations

import json
from pathlib import Path

from harness.artifacts import write_sealed_json
from harness.recipe.points import load_plans
from harness.recipe.server_flags.secret_args import joined, split_secret_args
from harness.redact import unseal

ROOT = Path(__file__).resolve().parents[2]
KEY, ADMIN = "sk-live-4f9a8b7c6d5e4f3a2b1c", "sk-admin-0a1b2c3d4e5f6a7b8c9d"


def test_split_and_join() -> None:
    public, secret = split_secret_args({"tp-size": 4, "api-key": KEY, "admin-api-key": None, "log-level": "info"})
    assert public == {"tp-size": 4, "log-level": "info"} and secret == {"--api-key": KEY}
    assert joined(["python3", "-m", "sglang.launch_server"], secret) == ["python3", "-m", "sglang.launch_server",
                                                                        "--api-key", KEY]


def test_a_plan_holds_the_keys_apart_and_the_sealed_plan_gives_them_back(tmp_path: Path) -> None:
    [plan] = load_plans(ROOT / "recipes" / "quickstart-sim.yaml", ["c4"],
                        [f"server.args.api-key={KEY}", f"server.args.admin-api-key={ADMIN}"])[1]
    assert KEY not in plan.server.argv and ADMIN not in plan.server.argv and "--api-key" not in plan.server.argv
    assert plan.server.secret_args == {"--api-key": KEY, "--admin-api-key": ADMIN} and plan.server.api_key == KEY
    launched = plan.server.launch_argv()
    assert launched[:len(plan.server.argv)] == plan.server.argv
    assert launched[len(plan.server.argv):] == ["--api-key", KEY, "--admin-api-key", ADMIN]

    values = write_sealed_json(tmp_path / "plan.json", {"plan": plan.model_dump()})
    text = (tmp_path / "plan.json").read_text()
    assert KEY not in text and ADMIN not in text
    back = unseal(json.loads(text), values)["plan"]["server"]
    assert back["secret_args"] == {"--api-key": KEY, "--admin-api-key": ADMIN} and back["argv"] == plan.server.argv

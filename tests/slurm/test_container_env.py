"""pyxis's environment rule under the local Slurm (its pyxis-compatible plugin): an image that sets
`SGLANG_SIMULATE_ACC_LEN` keeps its own value over the exported host value unless `--container-env` names it.

The point runs as a pyxis step inside a batch job, on a speculative simulator recipe whose golden curve gives
`SGLANG_SIMULATE_ACC_LEN`; the "image" sets 1.0. The pyxis launcher names every variable the harness sets in
`--container-env`, so the server has the golden value (read from its `/proc/<pid>/environ` at readiness). The same
launch without `--container-env` leaves the image's value in the server, and the point is invalid with
`env_not_applied` naming the variable.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import QUICKSTART, ROOT, read_json

IMAGES = Path("/etc/slurm/fake-pyxis/images")
IMAGE_VALUE = "1.0"

RUN = r"""
import json, sys
from pathlib import Path

import launchers.base
from harness.point.run import PointOptions, run_point
from harness.recipe.points import load_plans

recipe, out, image, mode = sys.argv[1:5]
if mode == "unnamed":   # a pyxis launch that does not name the harness's variables in --container-env
    launchers.base.pyxis_container_env = lambda env, ctx: []
_, plans = load_plans(Path(recipe), ["c2"], [f"image={image}", "client.duration_s=10"])
outcome = run_point(plans[0], PointOptions(out_dir=Path(out), launcher="pyxis", ready_timeout_s=120))
print("OUTCOME " + json.dumps({"state": outcome.state, "reason": outcome.reason, "dir": str(outcome.point_dir),
                               "golden": plans[0].server.env["SGLANG_SIMULATE_ACC_LEN"]}))
"""


@pytest.fixture(scope="module")
def image(slurm: None) -> Iterator[str]:
    """An image reference whose own environment (the plugin's env file for it) sets SGLANG_SIMULATE_ACC_LEN."""
    if not (Path("/etc/slurm/plugstack.conf.d/fake-pyxis.conf")).exists():
        pytest.fail("the local Slurm runs without its pyxis-compatible plugin (bash tools/slurm-local-setup.sh start)")
    name = f"harness-env-test/sim:{uuid.uuid4().hex[:8]}"
    env_file = IMAGES / (re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".env")
    IMAGES.mkdir(parents=True, exist_ok=True)
    env_file.write_text(f"SGLANG_SIMULATE_ACC_LEN={IMAGE_VALUE}\n")
    yield name
    env_file.unlink(missing_ok=True)


def _recipe(tmp_path: Path) -> Path:
    data = yaml.safe_load(QUICKSTART.read_text())
    data["config_key"] = "spec-env-sim"
    data["model"]["golden_key"] = "qwen3.5-397b-a17b-nvfp4"
    data["speculative"] = {"algorithm": "NEXTN", "num_steps": 3, "topk": 1, "num_draft_tokens": 4,
                           "golden": {"curve": "qwen3.5_mtp", "thinking": "thinking_on"}}
    data["client"]["traces"] = str(QUICKSTART.parent / data["client"]["traces"])
    data["points"] = {"c2": {}}
    path = tmp_path / "spec-env-sim.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _run_in_job(tmp_path: Path, image: str, mode: str) -> dict[str, Any]:
    script = tmp_path / "run_point.py"
    script.write_text(RUN)
    out, log = tmp_path / mode, tmp_path / f"{mode}.out"
    wrap = " ".join([sys.executable, str(script), str(_recipe(tmp_path)), str(out), image, mode])
    job = subprocess.run(["sbatch", "--wait", "--parsable", "--job-name=harness-env-test", f"--output={log}",
                          f"--chdir={ROOT}", "--time=00:10:00", f"--wrap={wrap}"],
                         capture_output=True, text=True, timeout=600, check=False)
    text = log.read_text() if log.exists() else ""
    line = next((ln for ln in text.splitlines() if ln.startswith("OUTCOME ")), None)
    assert line is not None, f"sbatch: {job.stderr}\n{text[-3000:]}"
    outcome: dict[str, Any] = json.loads(line[len("OUTCOME "):])
    return outcome


def test_the_golden_value_wins_over_the_images_only_because_container_env_names_it(tmp_path: Path,
                                                                                   image: str) -> None:
    named = _run_in_job(tmp_path, image, "named")
    point = Path(named["dir"])
    assert named["state"] == "completed", named
    assert named["golden"] != IMAGE_VALUE
    command = (point / "server_command.txt").read_text().splitlines()[0]
    listed = re.search(r"--container-env=(\S+)", command)
    assert listed and "SGLANG_SIMULATE_ACC_LEN" in listed.group(1).split(","), command
    env = read_json(point / "server_env.json") or {}
    assert env["source"].startswith("/proc/") and env["not_applied"] == []
    assert env["effective"]["SGLANG_SIMULATE_ACC_LEN"] == named["golden"]
    record = read_json(point / "point_result.json") or {}
    assert "env_not_applied" not in {r["code"] for r in record["validity"]["reasons"]}

    unnamed = _run_in_job(tmp_path, image, "unnamed")
    point = Path(unnamed["dir"])
    assert unnamed["state"] == "completed", unnamed
    assert "--container-env" not in (point / "server_command.txt").read_text()
    env = read_json(point / "server_env.json") or {}
    assert env["effective"]["SGLANG_SIMULATE_ACC_LEN"] == IMAGE_VALUE   # the image's value reached the server
    assert env["not_applied"] == [{"name": "SGLANG_SIMULATE_ACC_LEN", "expected": unnamed["golden"],
                                   "found": IMAGE_VALUE}]
    record = read_json(point / "point_result.json") or {}
    assert record["validity"]["valid"] is False
    reasons = {r["code"]: r["message"] for r in record["validity"]["reasons"]}
    assert "SGLANG_SIMULATE_ACC_LEN" in reasons["env_not_applied"]
    assert f"server has '{IMAGE_VALUE}'" in reasons["env_not_applied"]

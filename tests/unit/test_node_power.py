"""A deployment on Slurm nodes samples power on every node; the result reads the nodes' CSVs as one set of GPUs."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.point.record.result import read_node_telemetry
from harness.point.servers.deployment_nodes import Node
from harness.point.servers.node_power import power_csvs, sample_argv
from harness.power.samples import COLUMNS


def _csv(path: Path, uuid: str, watts: float, nvml: bool = True) -> None:
    rows = [",".join(COLUMNS)]
    for t in range(3):
        values = {"timestamp_ns": str(1_000_000_000 * (t + 1)), "gpu_index": "0", "gpu_uuid": uuid,
                  "power_w": str(watts), "energy_mj": str(int(1000 * t * watts))}
        rows.append(",".join(values.get(c, "") for c in COLUMNS))
    path.write_text("\n".join(rows) + "\n")
    path.with_name(path.stem + ".sampler.json").write_text(json.dumps({"nvml_available": nvml}))


def test_each_node_is_sampled_by_an_srun_step_on_that_node(tmp_path: Path) -> None:
    argv = sample_argv(Node(1, "n2", "127.0.1.2"), tmp_path / "power_n2.csv")
    assert argv[:7] == ["srun", "--overlap", "--nodes=1", "--ntasks=1", "--nodelist=n2",
                        "--job-name=harness-power-n2", "--export=ALL"]   # the name its stop finds the step by
    assert argv[7:12] == [sys.executable, "-m", "harness", "power", "sample"]
    assert argv[-2:] == ["--out", str(tmp_path / "power_n2.csv")]


def test_the_nodes_csvs_are_read_as_one_set_of_gpus(tmp_path: Path) -> None:
    assert power_csvs(tmp_path) == [tmp_path / "power.csv"]   # one server: the runner's own sampler
    _csv(tmp_path / "power_n1.csv", "GPU-a", 100.0)
    _csv(tmp_path / "power_n2.csv", "GPU-b", 200.0, nvml=False)
    csvs = power_csvs(tmp_path)
    assert [c.name for c in csvs] == ["power_n1.csv", "power_n2.csv"]
    samples, _, status = read_node_telemetry(csvs)
    assert sorted({s.gpu_uuid for s in samples}) == ["GPU-a", "GPU-b"] and len(samples) == 6
    assert status == {"nvml_available": False}   # a node without NVML is what the status says

"""GPU power on every node of a deployment that spans Slurm nodes.

The point runner's own sampler sees only the GPUs of the node it runs on. For a deployment placed on an
allocation's nodes, one `harness power sample` runs on each node instead, as an `srun --overlap --nodelist=NODE`
step with the harness's own interpreter (outside the server's container), writing `power_<node>.csv` and its
status sidecar in the point directory; SIGTERM to the step's task (through Slurm: srun itself would SIGKILL it)
stops it with its CSV complete. The result reads every node's CSV as one set of GPUs (each GPU by its UUID) and
lists the nodes it read.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from harness.point.servers.deployment_nodes import Node
from launchers.process_group import ProcessGroup
from launchers.srun_step import stop_step

NODE_CSV_GLOB = "power_*.csv"
LONGEST_S = 7 * 24 * 3600      # the sampler runs until it is stopped


def node_csv(pdir: Path, node: Node) -> Path:
    return pdir / f"power_{node.name}.csv"


def power_csvs(pdir: Path) -> list[Path]:
    """The power CSVs of a point: one per node of a deployment spanning Slurm nodes, else `power.csv`."""
    return sorted(pdir.glob(NODE_CSV_GLOB)) or [pdir / "power.csv"]


def step_name(node: Node) -> str:
    return f"harness-power-{node.name}"


def sample_argv(node: Node, csv: Path) -> list[str]:
    return ["srun", "--overlap", "--nodes=1", "--ntasks=1", f"--nodelist={node.name}",
            f"--job-name={step_name(node)}", "--export=ALL",
            sys.executable, "-m", "harness", "power", "sample", "--seconds", str(LONGEST_S), "--out", str(csv)]


class NodePowerSamplers:
    """One sampler step per node; `start` and `stop` as the point runner's own `PowerSampler` has them."""

    def __init__(self, nodes: list[Node], pdir: Path):
        self.nodes = [n for n in nodes if n.name is not None]
        self.pdir = pdir
        self.running: list[tuple[str, ProcessGroup]] = []

    def start(self) -> None:
        for node in self.nodes:
            csv = node_csv(self.pdir, node)
            self.running.append((step_name(node), ProcessGroup(sample_argv(node, csv), dict(os.environ),
                                                               csv.with_suffix(".log"))))

    def stop(self) -> None:
        """Idempotent: SIGTERM to every step's sampler (it writes its last row), then what is left is killed."""
        for name, group in self.running:
            stop_step(group, name, grace_s=15.0)
        self.running = []

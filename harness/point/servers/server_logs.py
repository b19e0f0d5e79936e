"""Which files of a point directory are its server's logs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.recipe.multinode.deployment import DeploymentPlan

ROUTER = "router"
SIM_TRUTH_LOG = "sim_truth.jsonl"   # the simulator's per-request truth log (`--sim-truth-log`) in a point's directory


def member_label(role: str, worker: int, node_rank: int) -> str:
    """A deployment worker's member label: `prefill_w0`, and `prefill_w0_n1` for node rank 1 of a worker
    spanning nodes."""
    return f"{role}_w{worker}" + (f"_n{node_rank}" if node_rank else "")


def member_log_name(label: str) -> str:
    """The log of a deployment's member in the point directory: `router.log`, `server_<label>.log`."""
    return "router.log" if label == ROUTER else f"server_{label}.log"


def worker_logs(dep: DeploymentPlan, log_dir: Path) -> list[Path]:
    """Every worker node's log of a deployment (every role, every node; not the router's), in node order:
    the logs whose KV pools a deployment's row sums."""
    return [log_dir / member_log_name(member_label(role.role, w.index, cmd.node_rank))
            for role in dep.roles for w in role.worker_plans for cmd in w.nodes]


def server_logs(pdir: Path) -> list[Path]:
    """A point's server logs: `server.log`, or a deployment's worker nodes' (`server_<member>.log`) and its
    router's (`router.log`); `server.log` (absent) when there are none yet."""
    found = sorted(pdir.glob("server_*.log")) + sorted(pdir.glob("router.log"))
    return [pdir / "server.log"] if (pdir / "server.log").exists() or not found else found

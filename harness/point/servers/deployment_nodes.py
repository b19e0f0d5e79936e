"""Where a deployment's nodes are: the `{nodeK}` symbols of a plan, bound to real hosts.

Locally (launcher `local`) every symbol is this host, 127.0.0.1: the workers and the router are processes side by
side, on the plan's distinct ports. Inside a Slurm allocation (launcher `pyxis`) symbol K is the allocation's K-th
node (`scontrol show hostnames $SLURM_JOB_NODELIST`), reached at its `NodeAddr`; each process runs there as an
`srun --overlap --nodelist=NODE` step.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass

from harness.errors import UserError

SYMBOL = re.compile(r"\{node(\d+)\}")
LOCAL_ADDRESS = "127.0.0.1"


@dataclass(frozen=True)
class Node:
    index: int
    name: str | None      # the Slurm node name; None for this host
    address: str          # what processes bind and clients connect to


def local_nodes(count: int) -> list[Node]:
    return [Node(i, None, LOCAL_ADDRESS) for i in range(count)]


def _scontrol(*args: str) -> str:
    try:
        done = subprocess.run(["scontrol", *args], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UserError(f"scontrol {' '.join(args)}: {exc}") from None
    if done.returncode != 0:
        raise UserError(f"scontrol {' '.join(args)}: {done.stderr.strip() or done.returncode}")
    return done.stdout


def node_address(show_node: str, name: str) -> str:
    """The `NodeAddr=` of `scontrol show node -o NAME`'s line (the name itself when Slurm gives none)."""
    m = re.search(r"\bNodeAddr=(\S+)", show_node)
    return m.group(1) if m and m.group(1) not in ("", "(null)") else name


def allocation_nodes(count: int) -> list[Node]:
    """The first `count` nodes of this Slurm job's allocation, in Slurm's order."""
    nodelist = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST")
    if not nodelist:
        raise UserError("a deployment with launcher pyxis runs inside a Slurm allocation (no SLURM_JOB_NODELIST)")
    names = _scontrol("show", "hostnames", nodelist).split()
    if len(names) < count:
        raise UserError(f"the deployment needs {count} node(s); this allocation has {len(names)} ({nodelist})")
    return [Node(i, name, node_address(_scontrol("show", "node", "-o", name), name))
            for i, name in enumerate(names[:count])]


def place(count: int, launcher_kind: str) -> list[Node]:
    """The nodes a deployment of `count` nodes runs on, for this launcher."""
    if launcher_kind == "local":
        return local_nodes(count)
    if launcher_kind == "pyxis":
        return allocation_nodes(count)
    raise UserError(f"--launcher {launcher_kind}: a deployment runs with launcher local (every node on this host) "
                    "or pyxis (one srun step per node of a Slurm allocation)")


def symbol_index(symbol: str) -> int:
    """K of a `{nodeK}` symbol."""
    m = SYMBOL.fullmatch(symbol)
    if m is None:
        raise ValueError(f"not a node symbol: {symbol!r}")
    return int(m.group(1))


def fill(token: str, nodes: list[Node]) -> str:
    """`token` with every `{nodeK}` replaced by node K's address."""
    return SYMBOL.sub(lambda m: nodes[int(m.group(1))].address, token)

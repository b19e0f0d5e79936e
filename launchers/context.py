"""Where and how one point's server runs: the context every launcher renders and starts a server in."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class LaunchContext:
    """Where and how one point's server runs."""

    point_dir: Path
    image: str
    engine: str
    mounts: tuple[str, ...] = ()          # "host_path:container_path"
    gpus: tuple[str, ...] | None = None   # GPU indices or UUIDs visible to the server; None = all
    container_name: str = "harness-server"  # docker's and enroot's container; the name of a pyxis srun step
    image_path: str | None = None         # a local .sqsh / .sif to use instead of pulling `image`
    node: str | None = None               # the Slurm node of the allocation a pyxis step runs on (a deployment's)
    log_name: str = "server.log"          # the file in point_dir the process's output goes to

"""How a server process starts on a node: local, docker, enroot, pyxis (srun step), apptainer.

Every launcher renders the exact argv that runs the plan's server command (`render`), and `start`
runs it in its own process group with its output streamed to the point's `server.log`.
"""

from __future__ import annotations

from launchers.base import Launcher, RunningServer, get_launcher, launcher_kinds
from launchers.context import LaunchContext

__all__ = ["LaunchContext", "Launcher", "RunningServer", "get_launcher", "launcher_kinds"]

"""Which files of a point directory are its server's logs."""

from __future__ import annotations

from pathlib import Path

ROUTER = "router"


def member_log_name(label: str) -> str:
    """The log of a deployment's member in the point directory: `router.log`, `server_<label>.log`."""
    return "router.log" if label == ROUTER else f"server_{label}.log"


def server_logs(pdir: Path) -> list[Path]:
    """A point's server logs: `server.log`, or a deployment's worker nodes' (`server_<member>.log`) and its
    router's (`router.log`); `server.log` (absent) when there are none yet."""
    found = sorted(pdir.glob("server_*.log")) + sorted(pdir.glob("router.log"))
    return [pdir / "server.log"] if (pdir / "server.log").exists() or not found else found

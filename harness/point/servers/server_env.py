"""The server's effective environment, read at readiness, against what the harness set.

A container runtime decides which variables a server really sees: pyxis keeps an image's own value of a variable
over the exported host value unless `--container-env` names it, and an entrypoint may rewrite anything. So once
the server is ready the harness reads the environment the server process actually has:

- docker: `docker exec <container> cat /proc/1/environ` (the server is the container's first process);
- every other launcher (local, pyxis, enroot, apptainer share this node's process table): `/proc/<pid>/environ` of
  the process listening on the server's port, else of the launched process itself.

`check` compares it with every variable the plan sets (recipe `server.env`, the golden `SGLANG_SIMULATE_ACC_*`,
the harness's own) and keeps, besides those, every `SGLANG_*`, `NCCL_*`, `CUDA_*` and `HF_*` variable. Values are
compared as they are and recorded through the project's redaction (a secret's value never lands in a file). A
variable the plan sets that the server has with another value, or not at all, is listed in `not_applied`; the
record's verdict turns that into `env_not_applied`. An environment that cannot be read is recorded with why
(`error`), not guessed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from harness.artifacts import env_view
from harness.point.servers import port_owner

RECORDED_PREFIXES = ("SGLANG_", "NCCL_", "CUDA_", "HF_")
SERVER_ENV_FILE = "server_env.json"
PROC = Path("/proc")


def parse_environ(data: bytes) -> dict[str, str]:
    """`/proc/<pid>/environ` (NUL-separated `NAME=VALUE`) as a mapping."""
    env: dict[str, str] = {}
    for item in data.split(b"\0"):
        name, sep, value = item.decode(errors="replace").partition("=")
        if sep and name:
            env[name] = value
    return env


def _read_proc(pid: int, proc: Path) -> tuple[dict[str, str] | None, str]:
    try:
        return parse_environ((proc / str(pid) / "environ").read_bytes()), ""
    except OSError as exc:
        return None, f"/proc/{pid}/environ: {exc.strerror or exc}"


def read_effective(launcher_kind: str, container: str, pid: int | None, port: int,
                   proc: Path = PROC) -> tuple[dict[str, str] | None, str, str | None]:
    """(the server's environment or None, where it was read, why it could not be read or None)."""
    if launcher_kind == "docker":
        argv = ["docker", "exec", container, "cat", "/proc/1/environ"]
        source = f"docker exec {container} cat /proc/1/environ"
        try:
            out = subprocess.run(argv, capture_output=True, timeout=60, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, source, f"{type(exc).__name__}: {exc}"
        if out.returncode != 0:
            return None, source, out.stderr.decode(errors="replace").strip()[-300:] or f"exit {out.returncode}"
        return parse_environ(out.stdout), source, None
    tried: list[str] = []
    for candidate in [*port_owner.listener_pids(port, proc), *([pid] if pid is not None else [])]:
        env, why = _read_proc(candidate, proc)
        if env is not None:
            return env, f"/proc/{candidate}/environ", None
        tried.append(why)
    return None, "/proc/<pid>/environ", "; ".join(tried) or f"no process of this user listens on port {port}"


def check(expected: dict[str, str], effective: dict[str, str] | None, source: str,
          error: str | None = None) -> dict[str, Any]:
    """The record of the server's environment: what the harness set, what the server has (the set variables and
    every recorded prefix), and which set variables did not arrive as set."""
    record: dict[str, Any] = {"source": source, "expected": env_view(dict(sorted(expected.items())))}
    if effective is None:
        record.update(effective=None, not_applied=None, error=error or "not read")
        return record
    kept = {k: v for k, v in effective.items() if k in expected or k.startswith(RECORDED_PREFIXES)}
    record["effective"] = env_view(dict(sorted(kept.items())))
    missing = []
    for name in sorted(expected):
        if effective.get(name) != expected[name]:
            found = effective.get(name)
            missing.append({"name": name, "expected": env_view({name: expected[name]})[name],
                            "found": None if found is None else env_view({name: found})[name]})
    record["not_applied"] = missing
    return record


def describe_not_applied(record: dict[str, Any]) -> str | None:
    """One line naming every variable that did not arrive as set, or None when all did (or it was not read)."""
    missing = record.get("not_applied") if isinstance(record, dict) else None
    if not missing:
        return None
    parts = [f"{m['name']} (set {m['expected']!r}, server has "
             + ("it unset" if m.get("found") is None else repr(m["found"])) + ")" for m in missing]
    return "; ".join(parts) + f", read from {record.get('source')}"

"""The router's version as installed where it ran, never assumed.

A deployment's router runs with the same interpreter as its first worker (`python3 -m ...` of the same image,
container or PATH; the simulator's workers and router both with the harness's own), so the version is the one
that interpreter's `pip freeze` lists in the worker's fingerprint (`pip_packages[capture.python_executable]`).
Absent from it (the fingerprint was not captured, or the router is not a pip package there), the row publishes
no router block and the record says why.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from harness.artifacts import read_json
from harness.errors import UserError

# the PyPI distribution of each router kind
DISTRIBUTION = {"sglang-router": "sglang-router", "smg": "smg"}
PINNED = re.compile(r"^([A-Za-z0-9_.\-]+)==(\S+)$")
# `name @ file:///.../name-1.2.3-cp38-abi3-....whl#sha256=...`: installed from a wheel file (PEP 427 names)
FROM_WHEEL = re.compile(r"^([A-Za-z0-9_.\-]+) @ \S*/([A-Za-z0-9_.]+)-([^-/]+)-[^/]*\.whl(#\S*)?$")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def frozen_version(freeze: list[str], distribution: str) -> str | None:
    """The version `pip freeze` lines pin `distribution` to, or that of the wheel file it was installed from
    (names compared as PyPI normalizes them); None for any other form (a VCS or editable install)."""
    want = _normal(distribution)
    for line in freeze:
        pinned, wheel = PINNED.match(line.strip()), FROM_WHEEL.match(line.strip())
        if pinned and _normal(pinned.group(1)) == want:
            return pinned.group(2)
        if wheel and _normal(wheel.group(1)) == want and _normal(wheel.group(2)) == want:
            return wheel.group(3)
    return None


def router_metadata(kind: str, fingerprint: dict[str, Any] | None) -> tuple[dict[str, str] | None, str | None]:
    """InferenceX's component metadata of the router (`{name, version}`), or None and the reason."""
    if fingerprint is None:
        return None, "router_version_unmeasured: the first worker's fingerprint was not captured"
    interpreter = (fingerprint.get("capture") or {}).get("python_executable")
    freeze = (fingerprint.get("pip_packages") or {}).get(interpreter) or []
    version = frozen_version(freeze, DISTRIBUTION[kind])
    if version is None:
        return None, (f"router_version_unmeasured: {DISTRIBUTION[kind]} is not in the pip freeze of {interpreter} "
                      "(the first worker's interpreter)")
    return {"name": kind, "version": version}, None


def read_fingerprint(path: Path) -> dict[str, Any] | None:
    """A worker's fingerprint through the project's bounded JSON reader; None when absent or unreadable."""

    if not path.exists():
        return None
    try:
        return read_json(path, "fingerprint")
    except UserError:
        return None

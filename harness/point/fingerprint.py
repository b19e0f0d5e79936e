"""Worker fingerprints (`fingerprint_agg_w0.json`): what actually ran, in a deterministic key order.

Host side: host name, time, arch, OS, Python, harness and AIPerf versions, GPUs through NVML (or the reason
they are absent), the image reference; server side: what `/server_info` reports (resolved arguments,
version) and the server's environment as launched. Secrets are redacted (`harness.redact`), in what the
server reports too (SGLang echoes its arguments, `api_key` included). Every probe is fault-tolerant:
a failed probe becomes `{"error": ...}` under its key rather than aborting the point.
"""

from __future__ import annotations

import json
import platform
import socket
import sys
import urllib.request
from datetime import UTC, datetime
from typing import Any

from harness.redact import redact_argv, redact_data, redact_env

IMAGE_ENV = ("SGLANG_BUILD_COMMIT", "SGLANG_IMAGE_TAG", "SGLANG_VERSION", "CUDA_VERSION", "NVIDIA_DRIVER_VERSION")


def _probe(fn: Any) -> Any:
    try:
        return fn()
    except Exception as exc:  # a probe never aborts the point
        return {"error": f"{type(exc).__name__}: {exc}"}


def server_info(base_url: str) -> dict[str, Any]:
    for path in ("/server_info", "/get_server_info"):
        try:
            with urllib.request.urlopen(base_url + path, timeout=10) as resp:
                info: dict[str, Any] = json.loads(resp.read())
                return info
        except Exception as exc:  # try the older name, then report
            last = exc
    return {"error": f"{type(last).__name__}: {last}"}


def _versions() -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {}
    for dist in ("agentic-bench-harness", "aiperf", "sglang"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def host_fingerprint() -> dict[str, Any]:
    from harness.gpu_info import gpu_inventory

    return {
        "host": socket.gethostname(),
        "time_utc": datetime.now(UTC).isoformat(),
        "arch": platform.machine(),
        "os": platform.platform(),
        "python": sys.version.split()[0],
        "versions": _probe(_versions),
        "gpu": _probe(gpu_inventory),
    }


def build_fingerprint(*, host: dict[str, Any], server: dict[str, Any], image: str, image_digest: str | None,
                      engine: str, server_argv: list[str], server_env: dict[str, str], launcher: str,
                      ) -> dict[str, Any]:
    """Assemble the fingerprint with every mapping's keys sorted (clean diffs)."""
    image_env = {k: server_env[k] for k in IMAGE_ENV if k in server_env}
    data = {
        "engine": engine,
        "launcher": launcher,
        "image": {"reference": image, "digest": image_digest, "env": image_env},
        "host": host,
        "server": {"argv": redact_argv(server_argv), "env": redact_env(server_env), "server_info": server},
    }
    ordered: dict[str, Any] = _sorted(redact_data(data))
    return ordered


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value

"""`harness fingerprint diff`: what differs between two worker fingerprints, ignoring what differs between
any two launches of the same point.

Per-launch values are dropped or masked before comparing: capture times (`time_utc`, `timestamp`,
`startup_time`) and durations (`seconds`), the server's port (`--port N` in argv and launch commands, `port`
keys, the container name that embeds it), the launch token (`--weight-version harness-launch-…`, the
`weight_version` it sets), process ids, and what the scheduler measured since it started: the load-dependent
keys of `/server_info`'s `internal_states` (SGLang's `get_internal_state`: `last_gen_throughput`,
`avg_spec_accept_length`, `step_time_dict`, queue and batch sizes, `load`; the simulator's `sim` counters). Lists are compared item by item; package lists
(`pip_packages`, `packages`: `name==version` strings, srt-slurm's `{source: [name==version, ...]}` or
`{name: version}` mappings) are compared per package, so a changed package is one line
`pip_packages./opt/venv/bin/python3.torch: "2.9.0" -> "2.9.1"`. Two fingerprints of identical points give
no lines at all. A package source that one side did not capture (its `packages_error`, or an empty or missing
list) is one line `pip_packages.<source>: not captured in A (why)`, not a list of removals.
(srt-slurm's own `diff_fingerprints` reads the same files; see docs/running.md.)
"""

from __future__ import annotations

import json
import re
from typing import Any

VOLATILE_KEYS = frozenset({"time_utc", "timestamp", "startup_time", "pid", "server_pid", "container_name",
                           "seconds"})
PORT_KEYS = frozenset({"port"})
# `internal_states` items: values SGLang's scheduler measured since it started, not settings.
RUNTIME_STATE_KEYS = frozenset({"last_gen_throughput", "avg_spec_accept_length", "step_time_dict", "load",
                                "waiting_queue_size", "running_batch_size", "prefill_decode_size",
                                "pending_dp_reqs_size", "engine_paused", "sim"})
PACKAGE_KEYS = frozenset({"pip_packages", "packages"})
_PORT_FLAG = re.compile(r"(--port[ =])\d+")
_PORT_IN_NAME = re.compile(r"-\d{2,5}$")
_NAME_FLAG = re.compile(r"(--name[ =]\S*?-)\d{2,5}(?=\s|$)")
_TOKEN = re.compile(r"harness-launch-[0-9a-f]{16}")


def _packages(value: Any) -> Any:
    """`["torch==2.9.0", ...]` or `[{"name", "version"}]` → `{"torch": "2.9.0"}`; srt-slurm's labelled form
    `{source: [lines]}` → `{source: {name: version}}`; anything else unchanged."""
    if isinstance(value, dict) and all(isinstance(v, list) for v in value.values()):
        return {label: _packages(lines) for label, lines in value.items()}
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        out: dict[str, str] = {}
        for item in value:
            name, sep, version = item.partition("==")
            if not sep:
                name, sep, version = item.partition(" @ ")
            out[name.strip()] = version.strip() if sep else ""
        return out
    if isinstance(value, list) and all(isinstance(v, dict) and "name" in v for v in value):
        return {str(v["name"]): v.get("version") for v in value}
    return value


def normalize(value: Any, key: str = "") -> Any:
    """The fingerprint without its per-launch values (see the module docstring)."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in VOLATILE_KEYS or (key == "internal_states" and k in RUNTIME_STATE_KEYS):
                continue
            if k in PORT_KEYS and isinstance(v, (int, str)):
                out[k] = "<port>"
                continue
            out[k] = normalize(_packages(v) if k in PACKAGE_KEYS else v, k)
        return out
    if isinstance(value, list):
        items = [normalize(v, key) for v in value]
        for i in range(len(items) - 1):
            if items[i] == "--port" and isinstance(items[i + 1], (str, int)):
                items[i + 1] = "<port>"
            elif items[i] == "--name" and isinstance(items[i + 1], str):  # a container named after the port
                items[i + 1] = _PORT_IN_NAME.sub("-<port>", items[i + 1])
        return items
    if isinstance(value, str):
        return _TOKEN.sub("<launch token>", _NAME_FLAG.sub(r"\1<port>", _PORT_FLAG.sub(r"\1<port>", value)))
    return value


def _j(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Lines `path: old -> new` for every leaf that differs; list items by index."""
    if isinstance(a, dict) and isinstance(b, dict):
        lines = []
        for key in sorted(set(a) | set(b)):
            sub = f"{path}.{key}" if path else str(key)
            if key not in a:
                lines.append(f"{sub}: (absent) -> {_j(b[key])}")
            elif key not in b:
                lines.append(f"{sub}: {_j(a[key])} -> (absent)")
            else:
                lines.extend(diff(a[key], b[key], sub))
        return lines
    if isinstance(a, list) and isinstance(b, list) and a != b:
        lines = []
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            if i >= len(a):
                lines.append(f"{sub}: (absent) -> {_j(b[i])}")
            elif i >= len(b):
                lines.append(f"{sub}: {_j(a[i])} -> (absent)")
            else:
                lines.extend(diff(a[i], b[i], sub))
        return lines
    return [f"{path}: {_j(a)} -> {_j(b)}"] if a != b else []


def uncaptured(fp: dict[str, Any]) -> dict[str, str]:
    """{source: why} for each package source that was not captured ("*": no package list at all): the
    capture's `packages_error`, a package list that is not one, or an empty one (a capture that named no error)."""
    errors = fp.get("packages_error")
    named = {str(k): str(v) for k, v in errors.items()} if isinstance(errors, dict) else {}
    packages = fp.get("pip_packages", fp.get("packages"))
    if not isinstance(packages, (dict, list)) or not packages:
        capture = fp.get("capture")
        why = capture.get("error") if isinstance(capture, dict) else None
        return {"*": "; ".join(named.values()) or str(why or "no packages listed")}
    return named


def _without_sources(fp: dict[str, Any], sources: set[str]) -> dict[str, Any]:
    out = {k: v for k, v in fp.items() if k not in ("schema_version", "packages_error")}
    if isinstance(out.get("capture"), dict):
        out["capture"] = {k: v for k, v in out["capture"].items() if k != "packages_error"}
    for key in PACKAGE_KEYS & set(out):
        if "*" in sources:
            del out[key]
        elif isinstance(out[key], dict):
            out[key] = {k: v for k, v in out[key].items() if k not in sources}
    return out


def fingerprint_diff(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """The lines that differ; a package source not captured on either side is one `not captured` line (with
    the reason), never a list of removals or additions that did not happen."""
    ua, ub = uncaptured(a), uncaptured(b)
    sources = set(ua) | set(ub)
    lines = [f"pip_packages{'' if src == '*' else '.' + src}: not captured in "
             + " and ".join(f"{side} ({why[src]})" for side, why in (("A", ua), ("B", ub)) if src in why)
             for src in sorted(sources)]
    return lines + diff(normalize(_without_sources(a, sources)), normalize(_without_sources(b, sources)))

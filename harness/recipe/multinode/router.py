"""The router in front of a deployment's workers: which kinds exist, their policies, and their command.

`sglang-router` is PyPI `sglang-router` 0.3.2 (`python -m sglang_router.launch_router`); `smg` is the Shepherd
Model Gateway 1.13 (`python -m smg.launch_router`, what `smg launch` runs: the `smg` script itself may be
sglang-router's, which installs one too), its successor, which adds `prefix_hash`, `consistent_hashing` and
`least_load`.
Both take the same flags for what the harness renders: `--worker-urls URL...` for aggregated workers;
`--pd-disaggregation --prefill URL BOOTSTRAP_PORT ... --decode URL ...` for prefill/decode; `--policy`, `--host`,
`--port`, and `--prometheus-host/--prometheus-port` (the router's own `/metrics`, on the port after its own: the
default, 29000, would collide between two routers on one host).
"""

from __future__ import annotations

from typing import Any

ROUTER_COMMAND: dict[str, list[str]] = {
    "sglang-router": ["python3", "-m", "sglang_router.launch_router"],
    "smg": ["python3", "-m", "smg.launch_router"],   # not the `smg` script: sglang-router installs one too
}
ROUTER_VERSION = {"sglang-router": "0.3.2", "smg": "1.13.0"}
# `--policy` choices of each router (their own `--help`: sglang-router 0.3.2, smg 1.13.0).
POLICIES: dict[str, tuple[str, ...]] = {
    "sglang-router": ("random", "round_robin", "cache_aware", "power_of_two", "manual"),
    "smg": ("random", "round_robin", "passthrough", "cache_aware", "power_of_two", "least_load", "manual",
            "consistent_hashing", "prefix_hash"),
}
OWNED_ROUTER_FLAGS = ("host", "port", "worker-urls", "pd-disaggregation", "prefill", "decode", "policy",
                      "prometheus-host", "prometheus-port")


def policy_problem(kind: str, policy: str | None) -> str | None:
    """Why `policy` cannot be given to router `kind`, or None when it can."""
    if policy is None or policy in POLICIES[kind]:
        return None
    elsewhere = [k for k, names in POLICIES.items() if policy in names and k != kind]
    where = f"; it is a policy of {', '.join(elsewhere)}" if elsewhere else ""
    return (f"{policy!r} is not a policy of {kind} {ROUTER_VERSION[kind]} (its policies: "
            f"{', '.join(POLICIES[kind])}){where}")


def render_flags(args: dict[str, Any]) -> list[str]:
    """`{name: value}` -> `--name value` (true: a bare switch; false or null: omitted; a list: one token each)."""
    argv: list[str] = []
    for name, value in args.items():
        if value is True:
            argv.append(f"--{name}")
        elif isinstance(value, list):
            argv += [f"--{name}", *(str(v) for v in value)]
        elif value is not False and value is not None:
            argv += [f"--{name}", str(value)]
    return argv


def router_argv(kind: str, policy: str | None, extra: dict[str, Any], host: str, port: int,
                prefill: list[tuple[str, int]], decode: list[str], aggregated: list[str]) -> list[str]:
    """The router's command: PD mode when prefill/decode workers are given (each prefill URL with its bootstrap
    port), else the aggregated workers' URLs."""
    argv = [*ROUTER_COMMAND[kind]]
    if prefill or decode:
        argv.append("--pd-disaggregation")
        for url, bootstrap in prefill:
            argv += ["--prefill", url, str(bootstrap)]
        for url in decode:
            argv += ["--decode", url]
    else:
        argv += ["--worker-urls", *aggregated]
    if policy is not None:
        argv += ["--policy", policy]
    return [*argv, "--host", host, "--port", str(port), "--prometheus-host", host,
            "--prometheus-port", str(metrics_port(port)), *render_flags(extra)]


def metrics_port(port: int) -> int:
    """The port of the router's own Prometheus `/metrics`: the one after its HTTP port."""
    return port + 1


# AIPerf sends its per-session correlation id as smg's routing key when this is set (the pinned AIPerf's environment).
ROUTING_KEY_ENV = "AIPERF_HTTP_X_SMG_ROUTING_KEY_FROM_CORRELATION_ID"


def client_routing_env(kind: str, policy: str | None) -> dict[str, str]:
    """What AIPerf's environment needs for the router to keep a session on one worker/rank: smg's
    consistent_hashing hashes the `X-SMG-Routing-Key` header only, which AIPerf sends (its correlation id, one per
    session) when `ROUTING_KEY_ENV` is true, as InferenceX's AgentX launchers set it."""
    return {ROUTING_KEY_ENV: "true"} if kind == "smg" and policy == "consistent_hashing" else {}

"""Review rules that mechanize InferenceX code-owner checks about a curve's serving setup.

- `publish-events` (Check 8): `publish_events_and_metrics: false` is prohibited. An SGLang recipe has no such
  setting (it is a Dynamo/TRT-LLM worker option), so the rule looks where a recipe could still carry it: an
  environment variable of that name (`DYN_TRTLLM_PUBLISH_EVENTS_AND_METRICS`) at any level, inherited included,
  and a server argument of that name, which the loader refuses as no SGLang flag.
- `kv-offload-dram` (the review's KV-offload rule): CPU DRAM for HiCache is at most the server's baseline DRAM
  times the share of its GPUs a point uses, and never above 3 TB on an HGX server (an NVL72 system: its standard
  DRAM). A point asks for `--hicache-size` GB per rank, times its ranks on one server.
- `dspark-verify-mode` (Check 11 on SGLang 0.5.23): SGLang's DSpark worker refuses a simulated accept length above
  1.0 unless `SGLANG_RAGGED_VERIFY_MODE=static`, so a DSpark point at its golden AL needs that variable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from harness.check.evidence import grouped, role_envs
from harness.check.model import CheckedRecipe, Finding, PlannedPoint
from harness.check.rule import Rule
from harness.recipe.golden import ENV_LEN
from slurm.profile import HostDram

PUBLISH_SETTING = "publish_events_and_metrics"
_FALSE = {"0", "false", "no", "off", "n", "f", ""}
HGX_CAP_GB = 3000                       # 3 TB per HGX (and MI355X) server, in --hicache-size's GB
DSPARK = "DSPARK"
VERIFY_ENV, VERIFY_STATIC = "SGLANG_RAGGED_VERIFY_MODE", "static"


def _publish_key(name: str) -> bool:
    return PUBLISH_SETTING in name.lower().replace("-", "_")


class PublishEvents(Rule):
    id: ClassVar[str] = "publish-events"
    inferencex_check: ClassVar[str] = "8"
    rationale: ClassVar[str] = ("publish_events_and_metrics: false is prohibited (at any level, inherited settings "
                                "included)")
    load_markers: ClassVar[tuple[str, ...]] = ("publish-events-and-metrics", PUBLISH_SETTING)

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        findings = []
        for pp in plans:
            for name, value in pp.env.items():
                if _publish_key(name) and value.strip().lower() in _FALSE:
                    findings.append(Finding("FAIL", f"{recipe.where_env(pp.name, name)}: {name}={value} disables "
                                                    "event and metric publication", pp.name))
            for role, env in role_envs(pp):
                for name, value in env.items():
                    if _publish_key(name) and name not in pp.env and value.strip().lower() in _FALSE:
                        findings.append(Finding("FAIL", f"{pp.name} ({role} workers): {name}={value} disables "
                                                        "event and metric publication", pp.name))
            for flag, arg in pp.args.items():
                if _publish_key(flag) and (arg is False or str(arg).strip().lower() in _FALSE):
                    findings.append(Finding("FAIL", f"{recipe.where_arg(pp.name, flag)}: {flag}={arg}", pp.name))
        return findings or [Finding("PASS", f"no {PUBLISH_SETTING}: false in base or any point")]


def allowed_dram_gb(host: HostDram | None, gpus_used: int, gpus_per_node: int) -> tuple[float, str]:
    """The KV-offload DRAM one server may give a point, and how it follows from the server."""
    if host is None:
        return HGX_CAP_GB, f"{HGX_CAP_GB} GB (the 3 TB cap; give --cluster for the server's own share)"
    share = host.gb * gpus_used / gpus_per_node
    if host.system == "hgx" and share > HGX_CAP_GB:
        return HGX_CAP_GB, f"{HGX_CAP_GB} GB (3 TB cap of an HGX server; {gpus_used}/{gpus_per_node} of {host.gb} GB " \
                           f"is {share:g} GB)"
    return share, f"{share:g} GB ({gpus_used}/{gpus_per_node} GPUs of the server's {host.gb} GB, {host.system})"


@dataclass(frozen=True)
class ServerDram:
    """What one server (node) of a point asks of its DRAM for HiCache: where, the point's GPUs on it, and the GB
    of each HiCache rank group (size per rank x ranks; None: a size set by ratio, known only at start-up)."""

    where: str
    gpus_used: int
    pools: tuple[tuple[int | None, int, str], ...]   # (GB per rank or None, ranks, --hicache-ratio as written)


def servers(pp: PlannedPoint, recipe: CheckedRecipe) -> list[ServerDram]:
    """Every server of a point that offloads KV to DRAM: the one server, or each node of a deployment."""
    r = recipe.recipe
    deployment = None if pp.plan is None else pp.plan.deployment
    if deployment is None:
        par, kv = r.parallelism, pp.point.kv_offload
        used = min(par.tp * par.pp * par.pcp, r.hardware.gpus_per_node)
        if kv.kind != "dram":
            return []
        ratio = str(pp.args.get("--hicache-ratio", "2.0 (SGLang's default)"))
        return [ServerDram(pp.name, used, ((kv.hicache_size_gb, used, ratio),))]
    nodes: dict[str, list[tuple[int | None, int, str, bool]]] = {}
    for role in deployment.roles:
        ranks = role.gpus_per_worker // role.nodes_per_worker
        dram = bool(role.args.get("enable-hierarchical-cache"))
        size = role.args.get("hicache-size")
        ratio = str(role.args.get("hicache-ratio", "2.0 (SGLang's default)"))
        for worker in role.worker_plans:
            for node in worker.nodes:
                nodes.setdefault(node.node.strip("{}"), []).append(
                    (size if isinstance(size, int) and size > 0 else None, ranks, ratio, dram))
    return [ServerDram(f"{pp.name} ({name})", sum(n[1] for n in held),
                       tuple((gb, ranks, ratio) for gb, ranks, ratio, dram in held if dram))
            for name, held in nodes.items() if any(n[3] for n in held)]


class KvOffloadDram(Rule):
    id: ClassVar[str] = "kv-offload-dram"
    inferencex_check: ClassVar[str] = ""
    rationale: ClassVar[str] = ("InferenceX review, KV offload: CPU DRAM for HiCache is at most the server's baseline "
                                "DRAM x (GPUs used / GPUs in the server), hard cap 3 TB per HGX server; NVL72: the "
                                "standard DRAM (harness check --cluster PROFILE gives the server's DRAM)")

    def __init__(self, host: HostDram | None = None, source: str | None = None):
        self.host = host
        self.source = source

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        per_node = recipe.recipe.hardware.gpus_per_node
        findings = []
        for pp in plans:
            for server in servers(pp, recipe):
                unsized = [ratio for gb, _, ratio in server.pools if gb is None]
                if unsized:
                    findings.append(Finding("WARN", f"{server.where}: host pool = --hicache-ratio {unsized[0]} x the "
                                                    "device KV pool, sized at start-up: the DRAM cannot be checked "
                                                    "before the run; give kv_offload.hicache_size_gb", pp.name))
                    continue
                asked = sum((gb or 0) * ranks for gb, ranks, _ in server.pools)
                sizes = " + ".join(f"{gb} GB x {ranks} ranks" for gb, ranks, _ in server.pools)
                allowed, why = allowed_dram_gb(self.host, server.gpus_used, per_node)
                text = f"{server.where}: --hicache-size {sizes} = {asked} GB per server"
                if asked > allowed:
                    findings.append(Finding("FAIL", f"{text}, over the allowed {why}", pp.name))
                else:
                    findings.append(Finding("PASS", f"{text}, within {why}", pp.name))
        return findings or [Finding("N/A", "no point offloads KV to DRAM")]


class DsparkVerifyMode(Rule):
    id: ClassVar[str] = "dspark-verify-mode"
    inferencex_check: ClassVar[str] = "11"
    rationale: ClassVar[str] = (f"SGLang 0.5.23's DSpark worker refuses a simulated accept length above 1.0 unless "
                                f"{VERIFY_ENV}={VERIFY_STATIC}: a DSpark point at its golden AL needs it")

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        spec = recipe.recipe.speculative
        if spec is None or spec.algorithm != DSPARK:
            return [Finding("N/A", "no DSpark speculative decoding")]
        refused: dict[str, str] = {}
        for pp in plans:
            if pp.plan is None:
                continue
            roles = role_envs(pp)
            for where, env in [(f"{pp.name} ({role} workers)", env) for role, env in roles] or \
                    [(pp.name, pp.plan.server.env)]:
                al = env.get(ENV_LEN)
                if al is None or float(al) <= 1.0:
                    continue
                mode = env.get(VERIFY_ENV)
                if mode != VERIFY_STATIC:
                    if mode is None:
                        got = f"no {VERIFY_ENV}"
                    elif roles:
                        got = f"{VERIFY_ENV}={mode}"
                    else:
                        got = f"{VERIFY_ENV}={mode} (from {recipe.where_env(pp.name, VERIFY_ENV)})"
                    refused[where] = (f"{ENV_LEN}={al} with {got}: SGLang's DSpark worker refuses it at start-up "
                                      f"(set {VERIFY_ENV}: {VERIFY_STATIC})")
        if refused:
            return grouped("FAIL", refused)
        return [Finding("PASS", f"every DSpark point above AL 1.0 sets {VERIFY_ENV}={VERIFY_STATIC}")]

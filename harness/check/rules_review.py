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

from typing import ClassVar

from harness.check.evidence import grouped
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
        r = recipe.recipe
        par = r.parallelism
        per_node = r.hardware.gpus_per_node
        used = min(par.tp * par.pp * par.pcp, per_node)
        allowed, why = allowed_dram_gb(self.host, used, per_node)
        findings = []
        for pp in plans:
            kv = pp.point.kv_offload
            if kv.kind != "dram":
                continue
            if kv.hicache_size_gb is None:
                ratio = pp.args.get("--hicache-ratio", "2.0 (SGLang's default)")
                findings.append(Finding("WARN", f"{pp.name}: host pool = --hicache-ratio {ratio} x the device KV "
                                                "pool, sized at start-up: the DRAM cannot be checked before the "
                                                "run; give kv_offload.hicache_size_gb", pp.name))
                continue
            asked = kv.hicache_size_gb * used
            text = f"{pp.name}: --hicache-size {kv.hicache_size_gb} GB x {used} ranks = {asked} GB per server"
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
            al = None if pp.plan is None else pp.plan.server.env.get(ENV_LEN)
            if al is None or float(al) <= 1.0:
                continue
            mode = pp.env.get(VERIFY_ENV)
            if mode != VERIFY_STATIC:
                got = f"{VERIFY_ENV}={mode} (from {recipe.where_env(pp.name, VERIFY_ENV)})" if mode is not None \
                    else f"no {VERIFY_ENV}"
                refused[pp.name] = (f"{ENV_LEN}={al} with {got}: SGLang's DSpark worker refuses it at start-up "
                                    f"(set {VERIFY_ENV}: {VERIFY_STATIC})")
        if refused:
            return grouped("FAIL", refused)
        return [Finding("PASS", f"every DSpark point above AL 1.0 sets {VERIFY_ENV}={VERIFY_STATIC}")]

"""The checks of `harness preflight`, each a function returning findings (one line each: level, code, file:key).

Pure over data except where a check's subject is a file the job will read (traces, checkpoints, the
tokenizer, the image), which is looked up on this machine through the cluster's mounts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml

from harness.recipe.plan import PointPlan
from harness.recipe.schema import Recipe
from slurm.render import deployment_fit_problem

Level = Literal["pass", "warn", "fail", "skip"]   # skip: not checked here, and why
PLACEHOLDER = re.compile(r"\bSITE\b|SITE[-_/]|[-_/]SITE")
TEARDOWN_S = 120.0  # stop the server (SIGTERM grace, container removal), write every artifact
VERSION_IN_TAG = re.compile(r"(?:^|[^0-9.])v?(\d+\.\d+\.\d+)(?:$|[^0-9])")


@dataclass(frozen=True)
class Finding:
    level: Level
    code: str
    where: str
    message: str

    def line(self) -> str:
        return f"{self.level.upper():<4} {self.code:<22} {self.where}: {self.message}"

    def to_json(self) -> dict[str, str]:
        return {"level": self.level, "code": self.code, "where": self.where, "message": self.message}


def version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def image_sglang_version(image: str) -> str | None:
    """The SGLang release an image tag names (`lmsysorg/sglang:v0.5.23-cu130` → 0.5.23); None for nightlies."""
    tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
    match = VERSION_IN_TAG.search(tag)
    return match.group(1) if match else None


@cache
def minimum_versions() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = yaml.safe_load((Path(__file__).parent / "min_sglang.yaml").read_text())
    return data


# ------------------------------------------------------------------------------------------------ cluster


def cluster_fields(raw: dict[str, Any], source: str) -> list[Finding]:
    """Placeholders left in the profile (fail); partition, account and QOS unset (warn: Slurm's defaults apply)."""
    out: list[Finding] = []

    def walk(node: Any, key: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{key}.{k}" if key else str(k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{key}[{i}]")
        elif isinstance(node, str) and PLACEHOLDER.search(node):
            out.append(Finding("fail", "cluster_placeholder", f"{source}:{key}",
                               f"{node!r} is a placeholder: replace it with this site's value"))

    walk(raw, "")
    for key in ("partition", "account", "qos"):
        if not raw.get(key):
            out.append(Finding("warn", f"{key}_unset", f"{source}:{key}",
                               f"not set: Slurm uses the user's default {key} (set it if the site requires one)"))
    if not out:
        out.append(Finding("pass", "cluster_fields", source, "no placeholders; partition, account and qos set"))
    return out


def gpus(recipe: Recipe, plans: list[PointPlan], profile: Any, recipe_src: str, cluster_src: str) -> list[Finding]:
    """The recipe's GPU type and node size match the cluster; tp×pp of every point fits one array task."""
    out: list[Finding] = []
    if recipe.engine == "sim" and profile.gpu != "sim" and profile.exclusive:
        out.append(Finding("warn", "gpu_idle", f"{recipe_src}:engine",
                           f"the simulator uses no GPU, but every point takes an exclusive {profile.gpu} node of "
                           f"{cluster_src} ({profile.gpus_per_node} GPUs idle per point); use a profile with "
                           "gpu: sim or exclusive: false for rehearsals"))
    if recipe.engine != "sim":
        if recipe.hardware.gpu != profile.gpu:
            out.append(Finding("fail", "gpu_type", f"{recipe_src}:hardware.gpu",
                               f"{recipe.hardware.gpu!r} but {cluster_src} has {profile.gpu!r}"))
        if recipe.hardware.gpus_per_node != profile.gpus_per_node:
            out.append(Finding("fail", "gpus_per_node", f"{recipe_src}:hardware.gpus_per_node",
                               f"{recipe.hardware.gpus_per_node} but {cluster_src} has {profile.gpus_per_node}"))
    for plan in plans:
        if plan.deployment is not None:
            problem = deployment_fit_problem(plan, profile, recipe_src)
            if problem is not None:
                out.append(Finding("fail", "deployment_fit", f"{recipe_src}:deployment",
                                   problem.removeprefix(f"{recipe_src}: ")))
                break
        elif plan.resources.num_gpus > profile.task_gpus:
            out.append(Finding("fail", "gpus_per_task", f"{recipe_src}:points.{plan.name}",
                               f"tp×pp = {plan.resources.num_gpus} GPUs, an array task on {cluster_src} gets "
                               f"{profile.task_gpus}"))
    if not any(f.level == "fail" for f in out):
        dep = plans[0].deployment if plans else None
        fits = (f"every worker fits its nodes of {profile.gpus_per_node} GPUs ({dep.nodes} node(s) per task)"
                if dep is not None else f"tp×pp fits the {profile.task_gpus} GPUs of an array task")
        out.append(Finding("pass", "gpus", f"{recipe_src}:parallelism", fits))
    return out


def deployment_nodes(plans: list[PointPlan], found: tuple[str, dict[str, str]] | str, recipe_src: str,
                     cluster_src: str) -> list[Finding]:
    """A deployment's task allocates its N nodes at once: the partition must have N (registered) nodes. `found`
    is the partition and its nodes as Slurm reports them, or why Slurm could not be asked (a WARN)."""
    need = max((p.deployment.nodes for p in plans if p.deployment is not None), default=0)
    if need == 0:
        return []
    where = f"{recipe_src}:deployment"
    if isinstance(found, str):
        return [Finding("warn", "deployment_nodes", where, f"{need} node(s) per task, not checked: cannot ask "
                                                           f"Slurm ({found})")]
    partition, nodes = found
    if len(nodes) < need:
        return [Finding("fail", "deployment_nodes", where, f"the deployment needs {need} nodes in one allocation; "
                                                           f"partition {partition!r} of {cluster_src} has "
                                                           f"{len(nodes)}")]
    return [Finding("pass", "deployment_nodes", where, f"{need} node(s) per task; partition {partition!r} has "
                                                       f"{len(nodes)}")]


def walltime(plans: list[PointPlan], limit_s: int, margin_s: int, ready_timeout_s: float, recipe_src: str,
             cluster_src: str, *, all_points: bool = False) -> list[Finding]:
    """Every point's worst case (ready timeout + warmup + window + grace + teardown) ends before USR1 arrives;
    with `all_points` (one task runs every point on one deployment) the points' sum after one ready timeout."""
    usable = limit_s - margin_s
    worst = max(plans, key=lambda p: p.client.warmup_s + p.client.duration_s + p.client.grace_s)
    runs = plans if all_points else [worst]
    warmup, window, grace = (sum(getattr(p.client, k) for p in runs) for k in ("warmup_s", "duration_s", "grace_s"))
    need = ready_timeout_s + warmup + window + grace + TEARDOWN_S
    detail = (f"ready timeout {ready_timeout_s:.0f} s + warmup {warmup:.0f} s + window {window:.0f} s + grace "
              f"{grace:.0f} s + teardown {TEARDOWN_S:.0f} s = {need:.0f} s"
              + (f" (the {len(plans)} points in one task)" if all_points else ""))
    if need > usable:
        return [Finding("fail", "walltime", f"{cluster_src}:time_limit",
                        f"{detail} > {usable} s (time limit {limit_s} s - signal margin {margin_s} s) for "
                        f"{recipe_src}:points.{worst.name}; raise time_limit (or --time) to at least "
                        f"{_hms(need + margin_s)}")]
    return [Finding("pass", "walltime", f"{cluster_src}:time_limit", f"{detail} <= {usable} s")]


def _hms(seconds: float) -> str:
    s = int(-(-seconds // 60) * 60)
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:00"


def sglang_version(recipe: Recipe, recipe_src: str) -> list[Finding]:
    """The image's SGLang (from its tag) is the recipe's `server.sglang_version`; both meet the model's minimum."""
    if recipe.engine == "sim":
        return [Finding("pass", "sglang_version", f"{recipe_src}:image", "simulator: no SGLang image")]
    out: list[Finding] = []
    pinned = recipe.server.sglang_version
    in_image = image_sglang_version(recipe.image)
    if in_image is None:
        out.append(Finding("warn", "image_version_unknown", f"{recipe_src}:image",
                           f"the tag of {recipe.image} names no release; server.sglang_version {pinned} is assumed "
                           "(check the fingerprint's SGLang version after the first point)"))
    elif version_tuple(in_image) != version_tuple(pinned):
        out.append(Finding("fail", "image_version", f"{recipe_src}:server.sglang_version",
                           f"{pinned}, but the image {recipe.image} carries SGLang {in_image}: flags would be "
                           "checked against the wrong table"))
    key = recipe.model.golden_key
    minimum = minimum_versions().get(key or "")
    if minimum is not None:
        need = minimum["min_sglang"]
        for label, version in (("server.sglang_version", pinned), ("image", in_image)):
            if version is not None and version_tuple(version) < version_tuple(need):
                out.append(Finding("fail", "model_min_version", f"{recipe_src}:{label}",
                                   f"SGLang {version} cannot serve {key}: it needs >= {need} ({minimum['source']})"))
    if not any(f.level == "fail" for f in out):
        out.append(Finding("pass", "sglang_version", f"{recipe_src}:server.sglang_version",
                           f"{pinned}" + (f" (model needs >= {minimum['min_sglang']})" if minimum else "")))
    return out

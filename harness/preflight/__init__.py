"""Preflight: everything that can be checked before a GPU hour is spent, one finding per line.

`cluster(...)` checks a recipe against a cluster profile (what `harness preflight` and `harness submit` run):
placeholders and Slurm fields, the partition, account and QOS against what Slurm knows (`slurm_names`), GPUs per
task against tp×pp (a deployment: each worker within its nodes, and the partition's node count), the compute
nodes' CPU architecture, the walltime against each point's worst case, the SGLang version of the image and the
model's minimum, the trace corpus, model and draft checkpoints in the staged paths or HF cache the job will see,
the client's tokenizer, the imported image file and the driver interpreter (its architecture too), container
mounts against the site's allowed roots and, with a probe, what a pyxis step really runs in (`container`).
`local(...)` runs the part that applies to `harness run` on this machine (traces and the client's tokenizer).
Both return the plans as the job will run them (staged paths, full revision hashes, the resolved tokenizer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.preflight import aiperf_scenario, arch, checks, container, files, slurm_names
from harness.preflight.checks import Finding
from harness.preflight.paths import locate_checkpoint
from harness.recipe.plan import PointPlan
from harness.recipe.schema import Recipe
from slurm.profile import time_limit_seconds
from slurm.render import image_file, stage_plans


@dataclass(frozen=True)
class Report:
    findings: list[Finding]
    plans: list[PointPlan] = field(default_factory=list)
    staged: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(f.level == "fail" for f in self.findings)

    def failures(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "fail"]

    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.level == "warn"]

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "findings": [f.to_json() for f in self.findings]}


def cluster(recipe: Recipe, plans: list[PointPlan], profile: Any, raw_profile: dict[str, Any], *,
            recipe_src: str, cluster_src: str, time_limit: str | None = None,
            ready_timeout_s: float | None = None, python: str | None = None, reuse_deployment: bool = False,
            probe: bool = False) -> Report:
    """Every cluster-level check of `recipe`'s `plans` on `profile` (`raw_profile`: the file as read); `python`
    is the driver interpreter given on the command line (`--python`), which overrides `driver.python`;
    `reuse_deployment`: one task runs every point (the walltime covers them all); `probe`: run the container probe
    steps on the partition (`harness.preflight.container`)."""

    found: list[Finding] = []
    found += checks.cluster_fields(raw_profile, cluster_src)
    found += checks.gpus(recipe, plans, profile, recipe_src, cluster_src)
    partition_nodes = arch.ask_slurm(profile.partition)
    found += slurm_names.findings(profile, cluster_src)
    found += arch.nodes(profile.cpu_arch, partition_nodes, cluster_src)
    found += checks.deployment_nodes(plans, partition_nodes, recipe_src, cluster_src)
    found += checks.walltime(plans, time_limit_seconds(time_limit or profile.time_limit), profile.signal_margin_s,
                             ready_timeout_s or recipe.server.ready_timeout_s, recipe_src, cluster_src,
                             all_points=reuse_deployment)
    found += checks.sglang_version(recipe, recipe_src)
    corpus_cache = Path(profile.corpus_cache) if profile.corpus_cache else None
    found += files.traces(plans, recipe_src, corpus_cache)
    plans = files.with_corpus_cache(plans, corpus_cache)
    found += aiperf_scenario.findings(plans, recipe_src)
    staged_plans, staged = stage_plans(plans, profile.model_staging)
    in_container = profile.container.runtime != "none"
    more, ready = files.resolve_files(staged_plans, recipe_src, in_container=in_container,
                                      mounts=list(profile.default_mounts), hf_cache=profile.hf_cache,
                                      hf_cache_src=f"{cluster_src}:hf_cache")
    found += more
    if recipe.engine != "sim":
        found += files.image(profile, recipe.image, cluster_src)
    if profile.container.runtime != "none":
        cached = image_file(profile, recipe.image)
        found += container.static(profile, cached, cluster_src)
        if probe and profile.container.runtime == "pyxis":
            found += container.probe(profile, recipe.image, cached if cached and Path(cached).exists() else None,
                                     cluster_src)
    found += arch.driver(profile, python, cluster_src)
    found += arch.driver_build(profile, python, cluster_src)
    return Report(found, ready, staged)


def local(recipe: Recipe, plans: list[PointPlan], recipe_src: str, corpus_cache: Path | None = None) -> Report:
    """The checks that apply to a point run on this machine: its trace corpus (a pinned one staged in
    `corpus_cache`), AIPerf's own check of every point's client command, and the client's tokenizer.

    With `engine: sglang` the tokenizer is `client.tokenizer`, else the served model's checkpoint when
    `model.path` is a directory here, else its snapshot in this machine's HF cache (`HF_HUB_CACHE`,
    `HF_HOME/hub`, `~/.cache/huggingface/hub`).
    """
    import os

    found = files.traces(plans, recipe_src, corpus_cache)
    plans = files.with_corpus_cache(plans, corpus_cache)
    found += aiperf_scenario.findings(plans, recipe_src)
    hub = os.environ.get("HF_HUB_CACHE") or str(Path(os.environ.get("HF_HOME", Path.home() / ".cache/huggingface"))
                                                 / "hub")
    out: list[PointPlan] = []
    seen: set[str] = set()
    for plan in plans:
        model = None
        if recipe.engine != "sim" and not plan.client.tokenizer:
            model = locate_checkpoint(recipe.model.path, recipe.model.revision, mounts=[], in_container=False,
                                            hf_cache=hub)
        tokenizer, finding = files.client_tokenizer(plan, model, recipe_src)
        if finding.message not in seen:
            found.append(finding)
            seen.add(finding.message)
        out.append(plan.model_copy(update={"client": plan.client.model_copy(update={"tokenizer": tokenizer})}))
    return Report(found, out)

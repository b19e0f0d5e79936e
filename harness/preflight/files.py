"""Preflight of the files a point reads: trace corpus, checkpoints, the client's tokenizer, the image file.

`resolve_files` returns the findings and the plans as the job will run them: staged checkpoint paths, a short
revision hash replaced by the full commit the staged cache holds, the HF cache environment, and the client's
tokenizer set to the served model's own (never the demo one with `engine: sglang`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.preflight.checks import Finding, Level
from harness.preflight.paths import Checkpoint, has_tokenizer, host_path, locate_checkpoint
from harness.recipe.plan import PointPlan
from harness.traces.pinned import check_staged, default_cache, is_pinned_spec, parse_spec
from slurm.render import image_file

CHECKPOINT_FLAGS = {"--model-path": ("--revision", "model"),
                    "--speculative-draft-model-path": ("--speculative-draft-model-revision", "draft model")}


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv[:-1] else None


def traces(plans: list[PointPlan], recipe_src: str, corpus_cache: Path | None = None) -> list[Finding]:
    """The corpus the client replays exists on this host (the point runner reads it outside any container): a
    pinned corpus staged in `corpus_cache` (default: this machine's datasets cache) at its commit."""
    spec = plans[0].client.traces
    if is_pinned_spec(spec):
        staged = check_staged(corpus_cache or default_cache(), parse_spec(spec))
        level: Level = "fail" if not staged.ok else "pass" if staged.verified else "warn"
        return [Finding(level, "traces", f"{recipe_src}:client.traces", staged.message)]
    if spec.startswith("hf:"):
        return [Finding("warn", "traces", f"{recipe_src}:client.traces",
                        f"{spec}: a Hugging Face dataset, read from the node's HF cache at run time (not checked)")]
    path = Path(spec)
    if path.is_dir() and any(path.glob("*.json")) or path.is_file():
        return [Finding("pass", "traces", f"{recipe_src}:client.traces", f"{path}")]
    return [Finding("fail", "traces", f"{recipe_src}:client.traces",
                    f"{path}: no trace corpus there (a directory of *.json traces or a .jsonl file); stage it or "
                    "--set client.traces=DIR (absolute, or relative to the recipe)")]


def with_corpus_cache(plans: list[PointPlan], corpus_cache: Path | None) -> list[PointPlan]:
    """The plans with the staged corpus's cache set, for points that replay the pinned corpus."""
    if not plans or not is_pinned_spec(plans[0].client.traces):
        return plans
    cache = str(corpus_cache or default_cache())
    return [p.model_copy(update={"client": p.client.model_copy(update={"corpus_cache": cache})}) for p in plans]


def resolve_files(plans: list[PointPlan], recipe_src: str, *, in_container: bool, mounts: list[str],
                  hf_cache: str | None, hf_cache_src: str) -> tuple[list[Finding], list[PointPlan]]:
    """Check and resolve every point's checkpoints and tokenizer; the plans come back ready for the job."""
    if plans and plans[0].server.engine == "sim":
        return [Finding("pass", "checkpoints", f"{recipe_src}:engine", "simulator: no checkpoint is loaded")], plans
    findings: dict[tuple[str, str], Finding] = {}
    out: list[PointPlan] = []
    for plan in plans:
        argv = list(plan.server.argv)
        env = dict(plan.server.env)
        model: Checkpoint | None = None
        for flag, (rev_flag, label) in CHECKPOINT_FLAGS.items():
            spec = _flag(argv, flag)
            if spec is None:
                continue
            key = "model.path" if flag == "--model-path" else "speculative.draft_model"
            found = locate_checkpoint(spec, _flag(argv, rev_flag), mounts=mounts, in_container=in_container,
                                      hf_cache=hf_cache)
            if flag == "--model-path":
                model = found
            if found.problem is not None:
                findings[(key, found.problem)] = Finding("fail", "checkpoint", f"{recipe_src}:{key}",
                                                         f"{label}: {found.problem}")
                continue
            snap = found.snapshot
            note = f"{label} {spec}" + (f" at commit {snap.commit}" if snap else f" ({found.host_dir})")
            if snap is not None:
                env.update(HF_HUB_CACHE=str(hf_cache), HF_HUB_OFFLINE="1")
                if snap.rewritten:
                    argv[argv.index(rev_flag) + 1] = snap.commit
                    note += f" (revision {snap.revision} given as the full hash: offline lookups need it)"
            findings.setdefault((key, "ok"), Finding("pass", "checkpoint", f"{recipe_src}:{key}", note))
        tokenizer, finding = client_tokenizer(plan, model, recipe_src)
        findings.setdefault(("tokenizer", finding.message), finding)
        client = plan.client.model_copy(update={"tokenizer": tokenizer})
        server = plan.server.model_copy(update={"argv": argv, "env": env})
        out.append(plan.model_copy(update={"server": server, "client": client}))
    if hf_cache is not None and in_container and host_path(hf_cache, mounts, True) is None:
        findings[("hf_cache", "")] = Finding("fail", "hf_cache", hf_cache_src, f"{hf_cache} is not under any mount")
    return list(findings.values()), out


def client_tokenizer(plan: PointPlan, model: Checkpoint | None, recipe_src: str) -> tuple[str | None, Finding]:
    """The tokenizer AIPerf builds prompts with: `client.tokenizer`, else the served model's checkpoint."""
    where = f"{recipe_src}:client.tokenizer"
    if plan.client.tokenizer:
        path = Path(plan.client.tokenizer)
        if has_tokenizer(path):
            return str(path), Finding("pass", "tokenizer", where, f"{path} (client.tokenizer)")
        return None, Finding("fail", "tokenizer", where, f"{path}: no tokenizer.json or tokenizer.model there")
    if plan.server.engine == "sim":
        return None, Finding("pass", "tokenizer", where, "simulator: the harness's demo tokenizer")
    if model is None or model.host_dir is None:
        return None, Finding("fail", "tokenizer", where, "cannot resolve the served model's tokenizer: its "
                                                         "checkpoint is not found (see model.path)")
    if not has_tokenizer(model.host_dir):
        return None, Finding("fail", "tokenizer", where, f"{model.host_dir}: the checkpoint has no tokenizer.json "
                                                         "or tokenizer.model; set client.tokenizer")
    return str(model.host_dir), Finding("pass", "tokenizer", where, f"{model.host_dir} (the served model's own)")


def image(profile: Any, image_ref: str, cluster_src: str) -> list[Finding]:
    """The imported image file (squash file or .sif) the job starts the server from is in the image cache."""

    runtime = profile.container.runtime
    if runtime == "none":
        return [Finding("pass", "image", f"{cluster_src}:container.runtime", "no container: the server runs on the host")]
    cached = image_file(profile, image_ref)
    if cached is None:
        return [Finding("warn", "image", f"{cluster_src}:container.image_cache_dir",
                        f"not set: {runtime} pulls {image_ref} on every node at job start (needs registry access)")]
    if Path(cached).is_file() and Path(cached).stat().st_size > 0:
        return [Finding("pass", "image", f"{cluster_src}:container.image_cache_dir", cached)]
    return [Finding("fail", "image", f"{cluster_src}:container.image_cache_dir",
                    f"{cached} missing: import it once on an {profile.cpu_arch} node with registry access "
                    f"(python -m slurm.images ensure --runtime {runtime} --arch {profile.cpu_arch} {image_ref} "
                    f"{cached})")]

"""Review rules about the engine image, forbidden settings, SGLang flags and the shape of the curve."""

from __future__ import annotations

import re

from harness.check.evidence import forbidden_settings, grouped, point_names
from harness.check.model import CheckedRecipe, Finding, PlannedPoint, short_error
from harness.check.rule import Rule
from harness.errors import UserError
from harness.point.record.engine_label import CPU_HW
from harness.recipe.server_flags import flags
from harness.recipe.server_flags.server_args import effective_args

# Upstream SGLang images: lmsysorg/sglang (and its ROCm build), optionally with the Docker Hub registry
# spelled out, pinned by a tag other than `latest` and/or a sha256 digest.
_UPSTREAM_IMAGE = re.compile(
    r"^(?:(?:docker\.io|registry-1\.docker\.io|index\.docker\.io)/)?lmsysorg/sglang(?:-rocm)?"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?(?:@(?P<digest>sha256:[0-9a-f]{64}))?$"
)
FORBIDDEN_ENV: tuple[str, ...] = ("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE",)
FORBIDDEN_ARGS: tuple[str, ...] = ("--hf-overrides", "--json-model-override-args")
MIN_POINTS = 5


class UpstreamImage(Rule):
    id = "upstream-image"
    inferencex_check = "6a"
    rationale = "results must come from the upstream engine image (lmsysorg/sglang), pinned by tag or digest"

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        r = recipe.recipe
        if r.engine != "sglang":
            return [Finding("N/A", f"engine {r.engine}: the image {r.image} is recorded for identity only")]
        if r.hardware.gpu == CPU_HW:
            return [Finding("N/A", f"hardware {CPU_HW}: a real-SGLang CPU smoke curve, never GPU numbers; the image "
                                   f"{r.image} is recorded for identity only")]
        match = _UPSTREAM_IMAGE.match(r.image)
        if match is None:
            return [Finding("FAIL", f"image: {r.image} is not the upstream lmsysorg/sglang image "
                                    "(forks and private builds are not accepted)")]
        if match["digest"] is None and match["tag"] in (None, "latest"):
            return [Finding("FAIL", f"image: {r.image} is not pinned (give a version tag or a sha256 digest)")]
        return [Finding("PASS", f"image: {r.image}")]


class ForbiddenEnv(Rule):
    id = "forbidden-env"
    rationale = ("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE is prohibited by name (the draft runs as shipped); it "
                 "may not be set at any level, inherited settings included")
    inferencex_check = "13"
    load_markers = FORBIDDEN_ENV

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        findings = forbidden_settings(recipe, plans, "env", lambda key: "" if key in FORBIDDEN_ENV else None)
        return findings or [Finding("PASS", f"none of {', '.join(FORBIDDEN_ENV)} in base or any point")]


class ForbiddenArgs(Rule):
    id = "forbidden-args"
    inferencex_check = "8"
    rationale = "--hf-overrides and --json-model-override-args change the model's architecture or FLOPs"
    load_markers = ("hf-overrides", "json-model-override-args")

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        findings = forbidden_settings(recipe, plans, "args", lambda key: "" if key in FORBIDDEN_ARGS else None)
        return findings or [Finding("PASS", f"none of {', '.join(FORBIDDEN_ARGS)} in base or any point")]


class KnownFlags(Rule):
    id = "sglang-flags"
    rationale = ("every server flag and value must be accepted by the pinned SGLang version's parser; a flag it "
                 "deprecates is a warning")
    load_markers = ("not a server flag", "ambiguous in SGLang")

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        version = recipe.recipe.server.sglang_version
        table = recipe.table
        if table is None:
            return [Finding("FAIL", f"server.sglang_version: {recipe.table_error or f'no flag table for {version}'}")]
        bad: dict[str, str] = {}
        old: dict[str, str] = {}
        for pp in plans:
            try:
                checked = flags.validate_args(table, effective_args(recipe.recipe, pp.point), "args")
            except UserError as exc:
                bad[pp.name] = str(exc)
                continue
            deprecated = [name for name in checked if table.resolve(name).action.startswith("Deprecated")]
            if deprecated:
                old[pp.name] = (f"{', '.join(deprecated)}: deprecated in SGLang {version} (its parser warns at "
                                "startup; a later release removes it)")
        if bad:
            return grouped("FAIL", bad)
        if old:
            return grouped("WARN", old)
        return [Finding("PASS", f"all flags of {len(plans)} points are known to SGLang {version}")]


class Plannable(Rule):
    id = "plannable"
    rationale = "every point must turn into an exact, validated server command before any GPU is touched"
    fails_when_unloadable = True

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        failed = {pp.name: short_error(pp.error, recipe.source) for pp in plans if pp.error}
        if failed:
            return [Finding("FAIL", f"{name}: {message}", name) for name, message in failed.items()]
        return [Finding("PASS", f"all {len(plans)} points plan")]


class MinPoints(Rule):
    id = "min-points"
    rationale = (f"a pre-run estimate: a curve needs at least {MIN_POINTS} measured frontier points; "
                 f"fewer than {MIN_POINTS} planned points cannot reach them (Check 14 on measured points is "
                 "`harness check --results PATH`)")
    inferencex_check = "14 (estimate)"

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        text = (f"{len(plans)} planned points ({point_names(plans)}): a pre-run estimate of Check 14, which counts "
                "measured frontier points (harness check --results)")
        if len(plans) < MIN_POINTS:
            return [Finding("WARN", f"{text}; at least {MIN_POINTS} recommended")]
        return [Finding("PASS", text)]

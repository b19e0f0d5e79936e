"""Review rules about speculative decoding and batch sizing."""

from __future__ import annotations

from typing import Any

from harness.check.evidence import forbidden_settings, grouped
from harness.check.model import CheckedRecipe, Finding, PlannedPoint, fmt_value, short_error
from harness.check.rule import Rule
from harness.errors import UserError
from harness.recipe import golden
from harness.recipe.server_flags.server_args import dp_attention_size

SPEC_ALGORITHM = "--speculative-algorithm"
# Flags that change the draft itself (names from the pinned SGLang flag tables). Any other
# `--speculative-draft…dtype` flag except the draft's KV-cache dtype is a draft dtype override too.
DRAFT_CHANGES: dict[str, str] = {
    "--speculative-draft-model-quantization": "quantizes the draft",
    "--decrypted-draft-config-file": "replaces the draft's config",
}
MAX_RUNNING = "--max-running-requests"
# Decode CUDA-graph batch sizes: the maximum (int) or the explicit list; older spellings included.
CUDA_GRAPH_DECODE = ("--cuda-graph-max-bs-decode", "--cuda-graph-max-bs", "--cuda-graph-bs-decode", "--cuda-graph-bs")
TEMPLATE_FLAGS = ("--chat-template", "--hf-chat-template-name")


def speculative_points(plans: list[PlannedPoint]) -> list[PlannedPoint]:
    return [pp for pp in plans if pp.args.get(SPEC_ALGORITHM) not in (None, "", False)]


def _draft_change(flag: str) -> str | None:
    if flag in DRAFT_CHANGES:
        return DRAFT_CHANGES[flag]
    if flag.startswith("--speculative-draft") and "dtype" in flag and "kv-cache" not in flag:
        return "changes the draft's dtype"
    return None


class DraftAsShipped(Rule):
    id = "draft-as-shipped"
    inferencex_check = "13"
    rationale = "the draft model runs as shipped: no quantization, dtype, revision or checkpoint override"
    # The draft checkpoint and revision can only be given in the speculative block; the loader rejects
    # them anywhere else, with a message naming these keys.
    load_markers = ("speculative.draft_model", "speculative.draft_revision", *DRAFT_CHANGES)

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        spec = recipe.recipe.speculative
        findings = forbidden_settings(recipe, plans, "args", _draft_change)
        if findings:
            return findings
        if spec is None or not spec.draft_model:
            if speculative_points(plans):
                return [Finding("PASS", "no separate draft model and no draft override")]
            return [Finding("N/A", "no speculative decoding")]
        draft = spec.draft_model + (f"@{spec.draft_revision}" if spec.draft_revision else "")
        if spec.draft_revision is None and not spec.draft_model.startswith(("/", ".", "~")):
            return [Finding("WARN", f"draft {draft} has no pinned speculative.draft_revision")]
        return [Finding("PASS", f"draft {draft} served as shipped on all {len(plans)} points")]


class GoldenAcceptance(Rule):
    id = "golden-acceptance"
    inferencex_check = "11"
    rationale = "synthetic acceptance comes only from the golden curve, never from values in the recipe"
    load_markers = (golden.ACC_ENV_PREFIX, "speculative.golden")

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        findings = forbidden_settings(recipe, plans, "env",
                                      lambda key: "" if key.startswith(golden.ACC_ENV_PREFIX) else None)
        spec_points = speculative_points(plans)
        spec = recipe.recipe.speculative
        if not spec_points:
            return findings or [Finding("N/A", "no speculative decoding")]
        if spec is None:
            return [*findings, Finding("FAIL", f"{SPEC_ALGORITHM} is set through server args: declare the "
                                               "speculative block with its golden curve")]
        if spec.mode == "eval":
            leaks = {pp.name: f"{k}={v} injected in eval mode" for pp in spec_points if pp.plan
                     for k, v in pp.plan.server.env.items() if k.startswith(golden.ACC_ENV_PREFIX)}
            return findings + (grouped("FAIL", leaks) if leaks else
                               [Finding("PASS", "speculative.mode eval: real acceptance, nothing injected")])
        if spec.golden is None:
            return [*findings, Finding("FAIL", "speculative.golden: a speculative-decoding benchmark must "
                                               "reference its golden acceptance curve")]
        if recipe.recipe.model.golden_key is None:
            return [*findings, Finding("FAIL", "model.golden_key: needed to look up the golden curve "
                                               f"{spec.golden.curve}")]
        ok: dict[str, str] = {}
        bad: dict[str, str] = {}
        for pp in spec_points:
            if pp.plan is None:
                reason = short_error(pp.error or "", recipe.source)
                if any(word in reason for word in (golden.ACC_ENV_PREFIX, "golden", "speculative", "acceptance")):
                    bad[pp.name] = f"no synthetic acceptance: {reason}"
                continue
            expected = self._expected(recipe, spec, pp)
            injected = pp.plan.server.env.get(golden.ENV_LEN)
            if isinstance(expected, str):
                bad[pp.name] = expected
            elif injected != f"{expected[0]:.2f}":
                bad[pp.name] = f"{golden.ENV_LEN}={injected} but the golden curve gives {expected[0]:.2f}"
            else:
                ok[pp.name] = f"{golden.ENV_LEN}={injected} ({expected[1]})"
        return findings + grouped("FAIL", bad) + grouped("PASS", ok)

    @staticmethod
    def _expected(recipe: CheckedRecipe, spec: Any, pp: PlannedPoint) -> tuple[float, str] | str:
        assert pp.plan is not None and spec.golden is not None
        model_key = recipe.recipe.model.golden_key
        try:
            k = golden.draft_length(spec.algorithm, pp.plan.settings["args"])
            value = golden.lookup(spec.golden.curve, str(model_key), spec.golden.thinking, k)
        except UserError as exc:
            return str(exc)
        return value, f"{spec.golden.curve} / {model_key} / {spec.golden.thinking} / k={k}"


class ChatTemplate(Rule):
    id = "chat-template"
    inferencex_check = "9"
    rationale = "speculative decoding is benchmarked through a chat template, as the model is served in practice"

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        spec_points = speculative_points(plans)
        if not spec_points:
            return [Finding("N/A", "no speculative decoding")]
        template = recipe.recipe.model.chat_template
        if template:
            own = " (the checkpoint's own Jinja template)" if template == "checkpoint" else ""
            return [Finding("PASS", f"model.chat_template: {template}{own}")]
        missing: dict[str, str] = {}
        found: dict[str, str] = {}
        for pp in spec_points:
            flag = next((f for f in TEMPLATE_FLAGS if pp.args.get(f)), None)
            if flag is None:
                missing[pp.name] = ("speculative decoding without a chat template (set model.chat_template: a "
                                    "path, a builtin name, or `checkpoint` for the checkpoint's own)")
            else:
                found[pp.name] = f"{flag} {fmt_value(pp.args[flag])}"
        return grouped("FAIL", missing) + grouped("PASS", found)


class MaxRunningRequests(Rule):
    id = "max-running-requests"
    rationale = ("with speculative decoding the batch limit must be explicit, not derived from free memory; "
                 "below the concurrency, sessions queue in the server instead of running (WARN)")

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        below = self._below_concurrency(recipe, plans)
        spec_points = speculative_points(plans)
        if not spec_points:
            return below or [Finding("N/A", "no speculative decoding")]
        missing = [pp.name for pp in spec_points if pp.args.get(MAX_RUNNING) is None]
        if missing:
            return [Finding("FAIL", f"{', '.join(missing)}: no {MAX_RUNNING}", missing[0] if len(missing) == 1
                            else None), *below]
        values = ", ".join(f"{pp.name}={fmt_value(pp.args[MAX_RUNNING])}" for pp in spec_points)
        return below or [Finding("PASS", f"{MAX_RUNNING}: {values}")]

    @staticmethod
    def _below_concurrency(recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        """A point whose max running requests is below its concurrency (N live session trees, each at least one
        request in flight) measures a queue, not the concurrency it is named after."""
        out = []
        for pp in plans:
            limit = _as_int(pp.args.get(MAX_RUNNING))
            ranks = attention_dp_ranks(pp.args)
            if limit is None:
                continue
            total = max(1, limit // ranks) * ranks  # SGLang gives each attention-DP rank limit // ranks
            if total < pp.point.conc:
                chain = recipe.arg_origin(pp.name, MAX_RUNNING)
                split = "" if ranks == 1 else f" ({max(1, limit // ranks)} on each of {ranks} attention-DP ranks)"
                out.append(Finding("WARN", f"{recipe.label(chain)}: {MAX_RUNNING} {limit}{split} < concurrency "
                                           f"{pp.point.conc}: sessions beyond {total} wait in the server's queue",
                                   pp.name))
        return out


def attention_dp_ranks(args: dict[str, Any]) -> int:
    """The attention data-parallel width of a point's flags (keyed `--flag`); 1 without DP attention."""
    return dp_attention_size({name[2:]: value for name, value in args.items()})


def rank_limit(args: dict[str, Any]) -> int | None:
    """The max running requests of one attention-DP rank: SGLang gives each `max(1, limit // ranks)`
    (`kv_cache_configurator.py:resolve_max_num_reqs`), and each rank captures its own decode CUDA graphs."""
    limit = _as_int(args.get(MAX_RUNNING))
    return None if limit is None else max(1, limit // attention_dp_ranks(args))


def _as_int(value: Any) -> int | None:
    values = value if isinstance(value, list) else [value]
    try:
        return max(int(v) for v in values if not isinstance(v, bool))
    except (TypeError, ValueError):
        return None


class CudaGraphBatch(Rule):
    id = "cuda-graph-bs"
    rationale = "decode CUDA graphs above the max running requests are never used and only take memory"

    def check(self, recipe: CheckedRecipe, plans: list[PlannedPoint]) -> list[Finding]:
        findings: list[Finding] = []
        ok: list[str] = []
        for pp in plans:
            limit = rank_limit(pp.args)
            ranks = attention_dp_ranks(pp.args)
            per_rank = "" if ranks == 1 else f" on each of {ranks} attention-DP ranks (the {MAX_RUNNING} " \
                                             f"{fmt_value(pp.args.get(MAX_RUNNING))} divided)"
            for flag in CUDA_GRAPH_DECODE:
                if flag not in pp.args:
                    continue
                size = _as_int(pp.args[flag])
                if size is None or limit is None:
                    continue
                chain = recipe.arg_origin(pp.name, flag)
                if size > limit:
                    limit_chain = recipe.arg_origin(pp.name, MAX_RUNNING)
                    limit_from = "" if limit_chain == chain else \
                        f" ({MAX_RUNNING} from {' ← '.join(limit_chain[1:]) or limit_chain[0]})"
                    limit_text = f"{MAX_RUNNING} {limit}" if ranks == 1 else f"{limit} requests{per_rank}"
                    findings.append(Finding("FAIL", f"{recipe.label(chain)}: {flag} {size} > {limit_text}"
                                                    f"{limit_from}", pp.name))
                else:
                    ok.append(f"{pp.name} {size} ≤ {limit}")
        if findings:
            return findings
        if ok:
            return [Finding("PASS", f"decode graph batch ≤ max running requests: {', '.join(ok)}")]
        return [Finding("N/A", f"no point sets both a decode CUDA-graph batch size and {MAX_RUNNING}")]

"""`eval_row_<task>.json`: one InferenceX `EvalRow`, built from lm-eval's results and the eval's `meta_env.json`.

The row follows InferenceX's contract (`infx/results/schema/models.py`, `EvalRow`: strict, no extras) and
its builder's rules (`infx/results/evals.py`, `extract_metrics` + `build_row` + `build_rows`): metrics come
from the task's configured filters (`exact_match,strict-match` → `em_strict`, `exact_match,flexible-extract`
→ `em_flexible`, the last filter of each family wins), the primary score prefers strict, then accuracy, then
flexible, `n_eff` is lm-eval's effective sample count, and an invalid primary score or sample count turns the
row into an infrastructure failure with every score removed. Single-node rows copy tp/ep into the
prefill/decode fields with one worker each, as InferenceX's `meta_env.json` writer does.
`EvalRow` here is this harness's own strict model of that contract; `build_eval_row` is pure.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

RESULT_SCHEMA_VERSION = 1
StdErr = float | Literal["N/A"]
NonNegative = Annotated[int, Field(ge=0)]
_SCORE_NAMES = {"strict": "em_strict", "accuracy": "accuracy", "flex": "em_flexible"}


class EvalRow(BaseModel):
    """InferenceX's `EvalRow`, field for field (strict types, extra keys forbidden)."""

    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)

    result_schema_version: Annotated[int, Field(ge=RESULT_SCHEMA_VERSION, le=RESULT_SCHEMA_VERSION)]
    is_multinode: bool
    model_prefix: str
    model: str
    hw: str
    framework: str
    precision: str
    spec_decoding: str
    isl: NonNegative
    osl: NonNegative
    tp: NonNegative
    ep: NonNegative
    prefill_tp: NonNegative
    prefill_ep: NonNegative
    prefill_num_workers: NonNegative
    decode_tp: NonNegative
    decode_ep: NonNegative
    decode_num_workers: NonNegative
    conc: Annotated[int, Field(gt=0)]
    dp_attention: str
    prefill_dp_attention: str
    decode_dp_attention: str
    task: Annotated[str, Field(min_length=1)]
    em_strict: float | None
    em_strict_se: StdErr | None
    em_flexible: float | None
    em_flexible_se: StdErr | None
    n_eff: Annotated[float, Field(ge=0)] | None
    source: Annotated[str, Field(min_length=1)]
    infrastructure_success: bool
    integration_error: dict[str, JsonValue] | None
    eval_suite: Annotated[str, Field(min_length=1)] = None  # type: ignore[assignment]
    score: Annotated[float, Field(ge=0, le=1)] | None
    score_name: Literal["em_strict", "accuracy", "em_flexible"] | None
    score_se: StdErr | None


def _family(name: str) -> str | None:
    if "strict" in name:
        return "strict"
    if "flex" in name or "extract" in name:
        return "flex"
    return None


def _valid_score(value: object) -> bool:
    return (not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)
            and 0 <= value <= 1)


def _valid_count(value: object) -> bool:
    return not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value) and value > 0


def extract_metrics(results: dict[str, Any], task: str, source: str,
                    integration_error: dict[str, Any] | None = None) -> dict[str, Any]:
    """The metrics of `task` in lm-eval's results JSON (`results`, `configs`, `n-samples`)."""
    task_results = (results.get("results") or {}).get(task)
    config = (results.get("configs") or {}).get(task) or {}
    counts = results.get("n-samples")
    n_eff = (counts.get(task) or {}).get("effective") if isinstance(counts, dict) else None
    if integration_error is None and "n-samples" in results and not _valid_count(n_eff):
        integration_error = {"type": "InvalidEffectiveSampleCount", "message": f"invalid effective sample count: {n_eff!r}"}
    if integration_error is None and not isinstance(task_results, dict):
        integration_error = {"type": "InvalidTaskResults", "message": f"invalid task results for {task!r}"}
    m: dict[str, Any] = {"task": task, "strict": None, "strict_se": None, "flex": None, "flex_se": None,
                         "accuracy": None, "accuracy_se": None, "n_eff": n_eff,
                         "model": results.get("model_name"), "source": source,
                         "infrastructure_success": integration_error is None, "integration_error": integration_error}
    if integration_error is not None or not isinstance(task_results, dict):
        m["n_eff"] = 0
        return m
    metric_list = config.get("metric_list") or []
    base = metric_list[0]["metric"] if metric_list else "exact_match"
    filters = config.get("filter_list") or []
    if not filters:
        metric = "acc" if "acc" in task_results else base
        only = "accuracy" if "acc" in task_results else "strict"
        m[only], m[f"{only}_se"] = task_results.get(metric), task_results.get(f"{metric}_stderr")
    for f in filters:
        family = "accuracy" if base == "acc" and f["name"] == "none" else _family(f["name"])
        if family is not None:
            m[family] = task_results.get(f"{base},{f['name']}")
            m[f"{family}_se"] = task_results.get(f"{base}_stderr,{f['name']}")
    primary = _primary(m)
    if not _valid_score(m.get(primary) if primary else None):
        score = m.get(primary) if primary else None
        for name in _SCORE_NAMES:
            m[name] = m[f"{name}_se"] = None
        m["infrastructure_success"] = False
        m["integration_error"] = {"type": "InvalidPrimaryScore", "message": f"invalid primary score: {score!r}"}
    return m


def _primary(m: dict[str, Any]) -> str | None:
    return next((name for name in _SCORE_NAMES if m.get(name) is not None), None)


def build_eval_row(meta: dict[str, Any], m: dict[str, Any]) -> dict[str, Any]:
    """The row from `meta_env.json` and the extracted metrics (InferenceX's `build_row`, single node)."""
    tp, ep = int(meta["tp"]), int(meta["ep"])
    dp = str(meta.get("dp_attention", "none")).lower()
    primary = _primary(m)
    row = {
        "result_schema_version": RESULT_SCHEMA_VERSION,
        "is_multinode": bool(meta.get("is_multinode", False)),
        "model_prefix": meta.get("infmax_model_prefix", "unknown"),
        "model": m.get("model") or meta.get("model", "unknown"),
        "hw": str(meta.get("hw", "unknown")).upper(),
        "framework": str(meta.get("framework", "unknown")).lower(),
        "precision": str(meta.get("precision", "unknown")).lower(),
        "spec_decoding": meta.get("spec_decoding", "unknown"),
        "isl": int(meta.get("isl", 0)),
        "osl": int(meta.get("osl", 0)),
        "tp": tp,
        "ep": ep,
        "prefill_tp": int(meta.get("prefill_tp", tp)),
        "prefill_ep": int(meta.get("prefill_ep", ep)),
        "prefill_num_workers": int(meta.get("prefill_num_workers", 1)),
        "decode_tp": int(meta.get("decode_tp", tp)),
        "decode_ep": int(meta.get("decode_ep", ep)),
        "decode_num_workers": int(meta.get("decode_num_workers", 1)),
        "conc": int(meta["conc"]),
        "dp_attention": dp,
        "prefill_dp_attention": str(meta.get("prefill_dp_attention", dp)).lower(),
        "decode_dp_attention": str(meta.get("decode_dp_attention", dp)).lower(),
        "task": m["task"],
        "em_strict": m.get("strict"),
        "em_strict_se": m.get("strict_se"),
        "em_flexible": m.get("flex"),
        "em_flexible_se": m.get("flex_se"),
        "n_eff": m.get("n_eff"),
        "source": m["source"],
        "infrastructure_success": bool(m.get("infrastructure_success", True)),
        "integration_error": m.get("integration_error"),
        "score": m[primary] if primary is not None else None,
        "score_name": _SCORE_NAMES.get(primary) if primary is not None else None,
        "score_se": m.get(f"{primary}_se") if primary is not None else None,
    }
    EvalRow.model_validate(row)  # the contract, checked where the row is made
    return row

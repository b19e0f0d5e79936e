"""SGLang's model-independent rejections after argparse, mirrored so a plan fails before a GPU hour is spent.

SGLang resolves `ServerArgs` after parsing (`sglang/srt/arg_groups/*_hook.py`); some combinations that
argparse accepts raise there and the server exits at startup. The ones that do not need the model's config
are repeated here, with SGLang's own message and the source location (0.5.23; the same checks exist in
0.5.20). Both the planner (`harness plan`, `check`, `submit`) and the simulator call `post_init_errors`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

EAGLE_FAMILY = ("EAGLE", "EAGLE3", "NEXTN")


def _float(value: Any) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def post_init_errors(values: Mapping[str, Any]) -> list[str]:
    """SGLang's error messages for `values` (argparse destinations → parsed values; absent = the default).

    Checked: DFLASH needs a draft model and pp_size 1 (`speculative_hook.py:_handle_dflash`);
    `--swa-full-tokens-ratio` in (0, 1] (`kv_cache_hook.py`); `--prefill-decode-interval[-min-bs]` not
    negative (`validation_hook.py:validate_prefill_decode_interval`); HiCache and `--disable-radix-cache`
    are exclusive (`kv_cache_hook.py`); the EAGLE family without `--speculative-num-steps` takes no topk
    or draft-token count either (an assertion in `speculative_hook.py:_handle_eagle_family`).
    """
    errors: list[str] = []
    algo = str(values.get("speculative_algorithm") or "").upper()
    if algo == "DFLASH":
        if int(values.get("pp_size") or 1) != 1:
            errors.append("Currently DFLASH speculative decoding only supports pp_size == 1.")
        if values.get("speculative_draft_model_path") is None:
            errors.append("DFLASH speculative decoding requires setting --speculative-draft-model-path.")
    if algo in EAGLE_FAMILY and not values.get("speculative_adaptive") and values.get("speculative_num_steps") is None:
        given = [f"--{d.replace('_', '-')}" for d in ("speculative_eagle_topk", "speculative_num_draft_tokens")
                 if values.get(d) is not None]
        if given:
            errors.append(
                f"{' and '.join(given)} without --speculative-num-steps: SGLang asserts that all three are "
                "given or none (then it chooses them itself)"
            )
    ratio = _float(values.get("swa_full_tokens_ratio"))
    if ratio is not None and not 0 < ratio <= 1.0:
        errors.append("--swa-full-tokens-ratio should be in range (0, 1.0].")
    interval = _float(values.get("prefill_decode_interval"))
    if interval is not None and interval < 0:
        errors.append("--prefill-decode-interval must be non-negative.")
    min_bs = _float(values.get("prefill_decode_interval_min_bs"))
    if min_bs is not None and min_bs < 0:
        errors.append("--prefill-decode-interval-min-bs must be non-negative.")
    if values.get("enable_hierarchical_cache") and values.get("disable_radix_cache"):
        errors.append(
            "The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive and cannot "
            "be used at the same time. Please use only one of them."
        )
    return errors

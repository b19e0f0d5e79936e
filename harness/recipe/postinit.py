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


def post_init_errors(values: Mapping[str, Any], sglang_version: str = "0.5.23") -> list[str]:
    """SGLang's error messages for `values` (argparse destinations → parsed values; absent = the default).

    Checked: DFLASH needs a draft model and pp_size 1 (`speculative_hook.py:_handle_dflash`);
    `--swa-full-tokens-ratio` in (0, 1] (`kv_cache_hook.py`); `--prefill-decode-interval[-min-bs]` not
    negative (`validation_hook.py:validate_prefill_decode_interval`); HiCache and `--disable-radix-cache`
    are exclusive (`kv_cache_hook.py`); the EAGLE family without `--speculative-num-steps` takes no topk
    or draft-token count either (an assertion in `speculative_hook.py:_handle_eagle_family`); DP attention
    needs tp_size divisible by dp_size (an assertion in `parallel_hook.py:handle_data_parallelism`);
    attention context parallelism needs tp_size divisible by attn_cp_size and by dp_size x attn_cp_size
    (`parallel_hook.py:handle_context_parallelism`); decode context parallelism needs dcp_size >= 1, and
    `--dcp-comm-backend a2a|fi_a2a` and `--dcp-replicate-q-proj` need dcp_size > 1, tp_size must be divisible by
    dcp_size (raised when the process groups are built, `distributed/parallel_state.py:initialize_model_parallel`,
    before any weight is loaded), and from 0.5.23 dcp_size > 1
    refuses `--enable-prefill-cp` (`parallel_hook.py:handle_decode_context_parallelism`). `sglang_version` is the
    release whose rules apply where they differ.
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
    errors += _parallel_errors(values)
    if _release(sglang_version) >= (0, 5, 23) and _int(values, "dcp_size") > 1 and values.get("enable_prefill_cp"):
        errors.append("--dcp-size > 1 does not support --enable-prefill-cp.")
    if values.get("enable_hierarchical_cache") and values.get("disable_radix_cache"):
        errors.append(
            "The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive and cannot "
            "be used at the same time. Please use only one of them."
        )
    return errors


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split(".")[:3] if x.isdigit())


def _int(values: Mapping[str, Any], dest: str) -> int:
    value = values.get(dest)
    try:
        return 1 if value is None else int(value)
    except (TypeError, ValueError):
        return 1


def _parallel_errors(values: Mapping[str, Any]) -> list[str]:
    errors: list[str] = []
    tp, dp = _int(values, "tp_size"), _int(values, "dp_size")
    attn_dp = dp if values.get("enable_dp_attention") else _int(values, "attn_dp_size")
    if (values.get("enable_dp_attention") or attn_dp > 1) and attn_dp >= 1 and tp % attn_dp:
        errors.append(f"DP attention needs tp_size divisible by dp_size: SGLang asserts tp_size % dp_size == 0 "
                      f"(tp_size={tp}, dp_size={attn_dp})")
    cp = _int(values, "attn_cp_size")
    if cp > 1 and tp % cp:
        errors.append("tp_size must be divisible by attn_cp_size")
    elif cp > 1 and attn_dp >= 1 and tp % (attn_dp * cp):
        errors.append("tp_size must be divisible by dp_size * attn_cp_size")
    dcp = _int(values, "dcp_size")
    if dcp < 1:
        errors.append("Decode context parallel size (--dcp-size / --decode-context-parallel-size) must be >= 1, "
                      f"but got dcp_size={dcp}.")
    elif tp % dcp:
        errors.append(f"tensor_model_parallel_size ({tp}) must be divisible by decode_context_parallel_size ({dcp})")
    backend = values.get("dcp_comm_backend")
    if backend in ("a2a", "fi_a2a") and dcp <= 1:
        errors.append(f"--dcp-comm-backend {backend} only affects the decode context-parallel attention reduction "
                      "and therefore requires --dcp-size / --decode-context-parallel-size > 1, but got "
                      f"dcp_size={dcp}.")
    if values.get("dcp_replicate_q_proj") and dcp <= 1:
        errors.append("--dcp-replicate-q-proj requires --dcp-size > 1.")
    return errors

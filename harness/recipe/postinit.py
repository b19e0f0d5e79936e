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

    Checked: DFLASH needs a draft model and pp_size 1, and with DP attention 0.5.20 refuses it off NPU while
    0.5.23 needs CUDA, `--enable-dp-lm-head` and no attention context parallelism
    (`speculative_hook.py:_handle_dflash`); HiCache with dcp_size > 1 takes no speculative algorithm but DSPARK,
    no LMCache, no HiSparse and (0.5.20) no L3 backend (`hicache_hook.py:resolve_hicache_dcp_compatibility`);
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
    return [message for _, message in post_init_rejections(values, sglang_version)]


def post_init_rejections(values: Mapping[str, Any], sglang_version: str = "0.5.23") -> list[tuple[str, str]]:
    """(SGLang's rule, its message) for each rejection `post_init_errors` reports, in the same order; the rule is
    `module.function` under `sglang/srt/` (`arg_groups/...`) where SGLang raises."""
    out: list[tuple[str, str]] = []
    algo = str(values.get("speculative_algorithm") or "").upper()
    if algo == "DFLASH":
        dflash = "arg_groups/speculative_hook.py:_handle_dflash"
        out += [(dflash, m) for m in _dflash_dp_attention_errors(values, sglang_version)]
        if int(values.get("pp_size") or 1) != 1:
            out.append((dflash, "Currently DFLASH speculative decoding only supports pp_size == 1."))
        if values.get("speculative_draft_model_path") is None:
            out.append((dflash, "DFLASH speculative decoding requires setting --speculative-draft-model-path."))
    if algo in EAGLE_FAMILY and not values.get("speculative_adaptive") and values.get("speculative_num_steps") is None:
        given = [f"--{d.replace('_', '-')}" for d in ("speculative_eagle_topk", "speculative_num_draft_tokens")
                 if values.get(d) is not None]
        if given:
            out.append(("arg_groups/speculative_hook.py:_handle_eagle_family",
                        f"{' and '.join(given)} without --speculative-num-steps: SGLang asserts that all three are "
                        "given or none (then it chooses them itself)"))
    ratio = _float(values.get("swa_full_tokens_ratio"))
    if ratio is not None and not 0 < ratio <= 1.0:
        out.append(("arg_groups/kv_cache_hook.py", "--swa-full-tokens-ratio should be in range (0, 1.0]."))
    interval = _float(values.get("prefill_decode_interval"))
    validation = "arg_groups/validation_hook.py:validate_prefill_decode_interval"
    if interval is not None and interval < 0:
        out.append((validation, "--prefill-decode-interval must be non-negative."))
    min_bs = _float(values.get("prefill_decode_interval_min_bs"))
    if min_bs is not None and min_bs < 0:
        out.append((validation, "--prefill-decode-interval-min-bs must be non-negative."))
    out += [("arg_groups/parallel_hook.py", m) for m in _parallel_errors(values)]
    if _release(sglang_version) >= (0, 5, 23) and _int(values, "dcp_size") > 1 and values.get("enable_prefill_cp"):
        out.append(("arg_groups/parallel_hook.py:handle_decode_context_parallelism",
                    "--dcp-size > 1 does not support --enable-prefill-cp."))
    out += [("arg_groups/hicache_hook.py:resolve_hicache_dcp_compatibility", m)
            for m in _hicache_dcp_errors(values, sglang_version)]
    if values.get("enable_hierarchical_cache") and values.get("disable_radix_cache"):
        out.append(("arg_groups/kv_cache_hook.py",
                    "The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive and "
                    "cannot be used at the same time. Please use only one of them."))
    return out


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


def attention_dp_size(values: Mapping[str, Any]) -> int:
    """The attention data-parallel width of parsed values: `--attn-dp-size` (0.5.23), else `--dp-size` when
    `--enable-dp-attention` is given (the older spelling, which 0.5.23 turns into `--attn-dp-size`); 1 without."""
    attn = _int(values, "attn_dp_size")
    if attn > 1:
        return attn
    return _int(values, "dp_size") if values.get("enable_dp_attention") else 1


def _device(values: Mapping[str, Any]) -> str:
    return str(values.get("device") or "cuda")  # unset: SGLang picks the accelerator it finds (a GPU here)


def _dflash_dp_attention_errors(values: Mapping[str, Any], sglang_version: str) -> list[str]:
    """DFLASH with DP attention (`speculative_hook.py:_handle_dflash`): 0.5.20 refuses it on every device but
    NPU; 0.5.23 needs CUDA (or NPU), `--enable-dp-lm-head` and no attention context parallelism."""
    device = _device(values)
    if device == "npu":
        return []
    if _release(sglang_version) < (0, 5, 23):
        if values.get("enable_dp_attention"):
            return ["Currently DFLASH speculative decoding does not support dp attention on non-NPU devices."]
        return []
    if attention_dp_size(values) <= 1:
        return []
    if not device.startswith("cuda"):
        return ["DFLASH with dp attention requires CUDA or NPU."]
    if not values.get("enable_dp_lm_head"):
        return ["DFLASH with dp attention requires --enable-dp-lm-head."]
    if _int(values, "attn_cp_size") != 1:
        return ["DFLASH with dp attention does not support context parallel."]
    return []


def _hicache_dcp_errors(values: Mapping[str, Any], sglang_version: str) -> list[str]:
    """HiCache with decode context parallelism (`hicache_hook.py:resolve_hicache_dcp_compatibility`, both
    releases): no speculative algorithm but DSPARK, no LMCache, no HiSparse, and no L3 storage backend (0.5.20;
    0.5.23 only refuses it in `buffer_only` host-memory mode). SGLang also requires an MLA model there, which
    needs the model's config and is left to SGLang itself."""
    if _int(values, "dcp_size") <= 1 or not values.get("enable_hierarchical_cache"):
        return []
    backend = values.get("hicache_storage_backend")
    if backend is not None and _release(sglang_version) < (0, 5, 23):
        return ["--hicache-storage-backend (L3) with --dcp-size > 1 is not supported yet: under DCP each rank "
                "holds a distinct interleaved MLA KV shard, so the rank-0-only replicated-MLA backup and the "
                "storage keys must become dcp_rank-aware first. Run HiCache+DCP with L1/L2 only."]
    if backend is not None and values.get("hicache_host_memory_mode") == "buffer_only":
        return ["HiCache L3 with DCP does not support buffer_only host memory."]
    if values.get("speculative_algorithm") not in (None, "DSPARK"):
        return ["HiCache with --dcp-size > 1 only supports DSPARK speculative decoding; other draft-model host "
                "pools have no DCP index translation."]
    if values.get("enable_lmcache"):
        return ["--enable-lmcache with --dcp-size > 1 is not supported: LMCache has no DCP-aware index "
                "translation."]
    if values.get("enable_hisparse"):
        return ["--enable-hisparse with --dcp-size > 1 is not supported: the HiSparse host pool is constructed "
                "without DCP translation."]
    return []

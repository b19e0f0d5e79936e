"""The GPU KV pool as SGLang sizes it: cell size from the model config, pool from memory, caps and DP ranks."""

from __future__ import annotations

import pytest

from harness.sim.batching.kvpool import ModelConfig, cell_size, pool_tokens
from harness.sim.batching.timing import TimingModel, load_profile
from harness.sim.frontend.app import ServerArgsError, pool_line, resolve
from harness.sim.frontend.cli import build_parser

LLAMA3_8B = ModelConfig(name="llama-3-8b", num_hidden_layers=32, num_key_value_heads=8, head_dim=128)
DEEPSEEK_V3 = ModelConfig(name="deepseek-v3", num_hidden_layers=61, kv_lora_rank=512, qk_rope_head_dim=64)


def test_mha_cell_is_heads_per_gpu_times_k_and_v_times_layers_times_dtype() -> None:
    assert cell_size(LLAMA3_8B) == 8 * 256 * 32 * 2 == 131072
    assert cell_size(LLAMA3_8B, attn_tp=2) == 4 * 256 * 32 * 2
    assert cell_size(LLAMA3_8B, attn_tp=16) == 1 * 256 * 32 * 2  # fewer heads than GPUs: one head each
    assert cell_size(LLAMA3_8B, kv_cache_dtype="fp8_e4m3") == 65536
    assert cell_size(LLAMA3_8B, kv_cache_dtype="auto") == 131072
    v = LLAMA3_8B.model_copy(update={"v_head_dim": 64})
    assert cell_size(v) == 8 * (128 + 64) * 32 * 2


def test_mla_cell_is_the_latent_and_not_split_over_tp() -> None:
    assert cell_size(DEEPSEEK_V3) == (512 + 64) * 61 * 2
    assert cell_size(DEEPSEEK_V3, attn_tp=8, kv_cache_dtype="fp8_e4m3") == 576 * 61


def test_model_config_rejects_a_shape_without_kv_heads_and_unknown_dtypes() -> None:
    with pytest.raises(ValueError):
        ModelConfig(name="x", num_hidden_layers=2)
    with pytest.raises(ValueError):
        ModelConfig(name="x", num_hidden_layers=2, num_key_value_heads=1, head_dim=8, kv_cache_dtype="int3")


def test_pool_is_static_share_less_weights_over_cell_capped_and_page_floored() -> None:
    assert pool_tokens(24e9, 0.85, 16e9, 131072) == int((24e9 * 0.85 - 16e9) // 131072)
    assert pool_tokens(24e9, 0.85, 16e9, 131072, max_total_tokens=16384) == 16384
    assert pool_tokens(24e9, 0.85, 16e9, 131072, max_total_tokens=10**9) == pool_tokens(24e9, 0.85, 16e9, 131072)
    assert pool_tokens(24e9, 0.85, 16e9, 131072, page_size=64) % 64 == 0
    assert pool_tokens(24e9, 0.5, 16e9, 131072) == 0  # the weights do not fit the static share


def test_profiles_derive_kv_bytes_from_their_model() -> None:
    demo = load_profile("demo")
    assert demo.kv_bytes_per_token == 131072
    assert TimingModel(demo, 1).kv_pool_tokens(None) == 33111
    for name, tp, cell in (("h200-tp8", 8, 15616), ("gb300-tp4", 4, 31232)):
        p = load_profile(name)
        assert p.kv_bytes_per_token == 61 * 8 * 256  # fp8, 8 KV heads of 128
        t = TimingModel(p, tp)
        assert t.cell_bytes() == cell
        weights = p.total_params * p.weight_bytes_per_param / tp
        assert t.kv_pool_tokens(None) == int((p.hbm_bytes * 0.85 - weights) // cell)


def _resolve(*argv: str, profile: str = "demo"):
    return resolve(build_parser().parse_args(["--model-path", "m", "--sim-profile", profile, *argv]), {})


def test_server_log_line_and_flags_shrink_or_cap_the_pool() -> None:
    default = _resolve()
    assert f"max_total_num_tokens={default.rank_kv_capacity}," in pool_line(default, _ns(), "t")
    assert default.engine.kv_capacity == 33111
    assert _resolve("--mem-fraction-static", "0.8").engine.kv_capacity < default.engine.kv_capacity
    assert _resolve("--max-total-tokens", "16384").engine.kv_capacity == 16384
    assert _resolve("--max-total-tokens", "10000000").engine.kv_capacity == 33111  # a cap, never a raise
    h200 = _resolve("--tp-size", "8", profile="h200-tp8")
    assert _resolve("--tp-size", "8", "--mem-fraction-static", "0.5", profile="h200-tp8").engine.kv_capacity \
        < h200.engine.kv_capacity
    with pytest.raises(ServerArgsError, match="Not enough memory"):
        _resolve("--mem-fraction-static", "0.5")


def test_each_dp_attention_rank_has_its_own_pool() -> None:
    one = _resolve("--tp-size", "8", profile="h200-tp8")
    dp = _resolve("--tp-size", "8", "--dp-size", "8", "--enable-dp-attention", profile="h200-tp8")
    # attention TP 1: every rank keeps all 8 KV heads, so a rank's pool is an eighth of the TP8 pool
    assert dp.rank_kv_capacity == one.rank_kv_capacity // 8
    assert dp.engine.kv_capacity == 8 * dp.rank_kv_capacity


def _ns():
    return build_parser().parse_args(["--model-path", "m"])

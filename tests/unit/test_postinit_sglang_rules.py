"""SGLang's start-up rules the fast copy (`harness.recipe.postinit`) must hold: DFLASH with DP attention and
decode context parallelism with HiCache refuse to start (both releases, each with its own message), and
`harness plan` of a shipped GPU recipe with either variant exits 2 naming SGLang's rule."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main as cli
from harness.errors import UserError
from harness.recipe.load import expand_points, parse_recipe
from harness.recipe.plan import build_plan
from harness.recipe.postinit import post_init_errors, post_init_rejections

ROOT = Path(__file__).resolve().parents[2]
GB300 = ROOT / "recipes" / "musespark-fp4-gb300-sglang-agentic-dflash.yaml"
H200 = ROOT / "recipes" / "musespark-fp4-h200-sglang-agentic-dflash.yaml"

DFLASH: dict[str, Any] = {"speculative_algorithm": "DFLASH", "speculative_draft_model_path": "org/d", "tp_size": 4}
RAW: dict[str, Any] = {
    "config_key": "t", "image": "lmsysorg/sglang:v0.5.23",
    "model": {"path": "org/m", "served_name": "m", "chat_template": "checkpoint", "precision": "fp4"},
    "hardware": {"gpu": "gb300", "gpus_per_node": 4}, "parallelism": {"tp": 4},
    "server": {"args": {"max-running-requests": 8}},
    "speculative": {"algorithm": "DFLASH", "draft_model": "org/d", "num_draft_tokens": 8, "mode": "eval"},
    "client": {"traces": "traces/x", "unofficial": True}, "points": {"c4": {}},
}

DFLASH_DP_0523 = "DFLASH with dp attention requires --enable-dp-lm-head."
DFLASH_DP_0520 = "Currently DFLASH speculative decoding does not support dp attention on non-NPU devices."
HICACHE_DCP = ("HiCache with --dcp-size > 1 only supports DSPARK speculative decoding; other draft-model host "
               "pools have no DCP index translation.")


def plan_of(changes: dict[str, Any], version: str = "0.5.23") -> None:
    raw = copy.deepcopy(RAW)
    raw["server"]["sglang_version"] = version
    for key, value in changes.items():
        raw[key] = {**raw.get(key, {}), **value}
    recipe = parse_recipe(raw, "r.yaml")
    for point in expand_points(recipe):
        build_plan(recipe, point, "r.yaml")


@pytest.mark.parametrize(("values", "version", "message"), [
    ({**DFLASH, "attn_dp_size": 2}, "0.5.23", DFLASH_DP_0523),
    ({**DFLASH, "enable_dp_attention": True, "dp_size": 2}, "0.5.23", DFLASH_DP_0523),
    ({**DFLASH, "attn_dp_size": 2, "enable_dp_lm_head": True, "attn_cp_size": 2},
     "0.5.23", "DFLASH with dp attention does not support context parallel."),
    ({**DFLASH, "attn_dp_size": 2, "enable_dp_lm_head": True, "device": "xpu"},
     "0.5.23", "DFLASH with dp attention requires CUDA or NPU."),
    ({**DFLASH, "enable_dp_attention": True, "dp_size": 2, "enable_dp_lm_head": True}, "0.5.20", DFLASH_DP_0520),
    ({**DFLASH, "dcp_size": 2, "enable_hierarchical_cache": True}, "0.5.23", HICACHE_DCP),
    ({**DFLASH, "dcp_size": 2, "enable_hierarchical_cache": True}, "0.5.20", HICACHE_DCP),
    ({"tp_size": 4, "dcp_size": 2, "enable_hierarchical_cache": True, "hicache_storage_backend": "file"},
     "0.5.20", "--hicache-storage-backend (L3) with --dcp-size > 1 is not supported yet"),
    ({"tp_size": 4, "dcp_size": 2, "enable_hierarchical_cache": True, "hicache_storage_backend": "file",
      "hicache_host_memory_mode": "buffer_only"}, "0.5.23", "HiCache L3 with DCP does not support buffer_only"),
    ({"tp_size": 4, "dcp_size": 2, "enable_hierarchical_cache": True, "enable_lmcache": True},
     "0.5.23", "--enable-lmcache with --dcp-size > 1 is not supported"),
])
def test_sglang_refuses_these_and_so_does_the_fast_copy(values: dict[str, Any], version: str, message: str) -> None:
    errors = post_init_errors(values, version)
    assert errors and errors[0].startswith(message)


@pytest.mark.parametrize(("values", "version"), [
    ({**DFLASH, "attn_dp_size": 2, "enable_dp_lm_head": True}, "0.5.23"),   # 0.5.23's conditions met
    ({**DFLASH, "attn_dp_size": 2, "device": "npu"}, "0.5.23"),
    ({**DFLASH, "enable_dp_attention": True, "dp_size": 2, "device": "npu"}, "0.5.20"),
    ({**DFLASH, "dcp_size": 2}, "0.5.23"),                                   # dcp without HiCache
    ({**DFLASH, "enable_hierarchical_cache": True}, "0.5.23"),              # HiCache without dcp
    ({"tp_size": 4, "dcp_size": 2, "enable_hierarchical_cache": True, "speculative_algorithm": "DSPARK"}, "0.5.23"),
    ({"tp_size": 4, "dcp_size": 2, "enable_hierarchical_cache": True, "hicache_storage_backend": "file"}, "0.5.23"),
])
def test_what_sglang_accepts_passes(values: dict[str, Any], version: str) -> None:
    assert post_init_errors(values, version) == []


def test_each_rejection_names_sglangs_rule() -> None:
    assert post_init_rejections({**DFLASH, "attn_dp_size": 2}) == [
        ("arg_groups/speculative_hook.py:_handle_dflash", DFLASH_DP_0523)]
    assert post_init_rejections({**DFLASH, "dcp_size": 2, "enable_hierarchical_cache": True}) == [
        ("arg_groups/hicache_hook.py:resolve_hicache_dcp_compatibility", HICACHE_DCP)]


@pytest.mark.parametrize(("changes", "version", "message"), [
    ({"parallelism": {"tp": 4, "dp_attention": 2}}, "0.5.23", DFLASH_DP_0523),
    ({"parallelism": {"tp": 4, "dp_attention": 2}}, "0.5.20", DFLASH_DP_0520),
    ({"parallelism": {"tp": 4, "dcp": 2}, "kv_offload": {"kind": "dram", "hicache_size_gb": 10}}, "0.5.23",
     HICACHE_DCP),
])
def test_the_plan_fails_with_sglangs_rule(changes: dict[str, Any], version: str, message: str) -> None:
    with pytest.raises(UserError, match="rejects this at startup") as exc:
        plan_of(changes, version)
    assert message in str(exc.value)


def test_dp_attention_with_the_dp_lm_head_plans() -> None:
    plan_of({"parallelism": {"tp": 4, "dp_attention": 2},
             "server": {"args": {"max-running-requests": 8, "enable-dp-lm-head": True}}})


@pytest.mark.parametrize(("recipe", "override", "rule"), [
    (GB300, "parallelism.dp_attention=2", "speculative_hook.py:_handle_dflash"),
    (GB300, "parallelism.dcp=2", "hicache_hook.py:resolve_hicache_dcp_compatibility"),
    (H200, "parallelism.dp_attention=2", "speculative_hook.py:_handle_dflash"),
])
def test_shipped_gpu_recipes_with_these_variants_exit_2(recipe: Path, override: str, rule: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["plan", str(recipe), "--set", override]) == 2
    err = capsys.readouterr().err
    assert "rejects this at startup" in err and rule in err

"""Run with the real-SGLang venv's python: SGLang's own `DefaultPoolConfigurator` cell size and pool size for the
cases in argv[1] (JSON list of {attn_tp, layers, kv_heads, head_dim | kv_lora_rank, qk_rope_head_dim, dtype,
available_bytes}); prints a JSON list of {cell, pool}. The runtime context SGLang reads is stubbed per case."""
import json
import sys
import types

import torch
from sglang.srt.configs.model_config import ModelConfig
from sglang.srt.layers.cp import utils as cp_utils
from sglang.srt.model_executor import pool_configurator as pc

DTYPES = {"bfloat16": torch.bfloat16, "fp8_e4m3": torch.float8_e4m3fn}
out = []
for case in json.loads(sys.argv[1]):
    parallel = types.SimpleNamespace(attn_tp_size=case["attn_tp"], attn_dcp_size=1, attn_cp_size=1,
                                     enable_dsa_cache_layer_split=False)
    pc.get_parallel = cp_utils.get_parallel = lambda p=parallel: p
    mla = case.get("kv_lora_rank") is not None
    hf = types.SimpleNamespace(architectures=["DeepseekV3ForCausalLM" if mla else "LlamaForCausalLM"],
                               num_hidden_layers=case["layers"])
    mc = types.SimpleNamespace(hf_config=hf, hf_text_config=hf, is_draft_model=False, head_dim=case.get("head_dim", 0),
                               v_head_dim=case.get("head_dim", 0), kv_lora_rank=case.get("kv_lora_rank"),
                               qk_rope_head_dim=case.get("qk_rope_head_dim", 0),
                               get_total_num_kv_heads=lambda c=case: c.get("kv_heads", 1))
    mc.get_num_kv_heads = types.MethodType(ModelConfig.get_num_kv_heads, mc)
    kvc = types.SimpleNamespace(model_config=mc, kv_cache_dtype=DTYPES[case["dtype"]], use_mla_backend=mla,
                                server_args=types.SimpleNamespace(enable_hisparse=False), is_draft_worker=False,
                                kv_cache_dtype_str=case["dtype"])
    conf = object.__new__(pc.DefaultPoolConfigurator)
    conf.kv_cache_dtype_str = case["dtype"]
    conf._cell_size = pc.DefaultPoolConfigurator._compute_cell_size(conf, kvc, case["layers"])
    conf._fixed_overhead_bytes = 0
    conf._zero_kv_max_tokens = 0
    pool = conf.calculate_pool_sizes(case["available_bytes"], 1).max_total_num_tokens
    out.append({"cell": conf._cell_size, "pool": pool})
print(json.dumps(out))

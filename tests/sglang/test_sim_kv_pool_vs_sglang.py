"""The simulator's KV cell size and pool against SGLang 0.5.23's own code (`DefaultPoolConfigurator` in the tier's
installed wheel): the shipped profiles' models, an MLA model, fewer KV heads than GPUs, and DP attention."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from harness.sim.batching.kvpool import ModelConfig, cell_size, dtype_bytes, pool_tokens
from harness.sim.batching.timing import load_profile
from tests.sglang.conftest import Tier

SCRIPT = Path(__file__).with_name("sglang_kv_cell.py")
DEEPSEEK_V3 = ModelConfig(name="deepseek-v3", num_hidden_layers=61, kv_lora_rank=512, qk_rope_head_dim=64,
                          kv_cache_dtype="fp8_e4m3")


def _case(model: ModelConfig, attn_tp: int, available: int) -> dict[str, object]:
    case: dict[str, object] = {"attn_tp": attn_tp, "layers": model.num_hidden_layers,
                               "dtype": "fp8_e4m3" if dtype_bytes(model) == 1 else "bfloat16",
                               "available_bytes": available}
    if model.is_mla:
        case.update(kv_lora_rank=model.kv_lora_rank, qk_rope_head_dim=model.qk_rope_head_dim)
    else:
        case.update(kv_heads=model.num_key_value_heads, head_dim=model.head_dim)
    return case


def test_cell_and_pool_match_sglangs_formula(sglang_tier: Tier) -> None:
    rows = []   # (model, attn_tp, hbm, frac, weights per GPU)
    for name, tp, dp in (("demo", 1, 1), ("h200-tp8", 8, 1), ("gb300-tp4", 4, 1), ("h200-tp8", 8, 8)):
        p = load_profile(name)
        rows.append((p.model, tp // dp, p.hbm_bytes, p.mem_fraction_static,
                     p.total_params * p.weight_bytes_per_param / tp))
    rows.append((DEEPSEEK_V3, 8, 141e9, 0.85, 671e9 / 8))
    rows.append((load_profile("demo").model, 16, 24e9, 0.85, 1e9))   # fewer KV heads than GPUs
    cases = [_case(m, tp, int(hbm * frac - w)) for m, tp, hbm, frac, w in rows]
    proc = subprocess.run([str(sglang_tier.python), str(SCRIPT), json.dumps(cases)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])
    ours = [{"cell": cell_size(m, tp), "pool": pool_tokens(hbm, frac, w, cell_size(m, tp))}
            for m, tp, hbm, frac, w in rows]
    assert ours == theirs

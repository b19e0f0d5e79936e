"""The GPU KV pool as SGLang sizes it: bytes per token from the model's config, tokens from the memory left.

A profile names the model it simulates by the public config fields that decide its KV footprint (`ModelConfig`,
the profile's `"model"` object). SGLang 0.5.23 (`model_executor/pool_configurator.py`,
`DefaultPoolConfigurator._compute_cell_size`) stores per token, on every GPU of an attention-TP group:

- MHA/GQA: `max(1, num_key_value_heads // attn_tp) * (head_dim + v_head_dim) * num_layers * dtype_size`
  (`ModelConfig.get_num_kv_heads`: a GPU keeps at least one KV head when there are fewer heads than GPUs);
- MLA (`kv_lora_rank` set): `(kv_lora_rank + qk_rope_head_dim) * num_layers * dtype_size`, the latent is
  replicated, not split, over the attention-TP group.

`dtype_size` is the KV cache dtype's element size (`--kv-cache-dtype`, `auto` = the model's dtype).

The pool (`kv_cache_configurator.py`, `_profile_available_bytes` and `calculate_pool_sizes`) is what is left of
the GPU's memory once the weights are loaded and the non-static share `1 - --mem-fraction-static` is set aside:
`(hbm_bytes * mem_fraction_static - weight bytes per GPU) // cell_size` tokens, floored to the page size and
capped by `--max-total-tokens`. With DP attention every attention-DP rank has such a pool of its own (its
attention-TP group is `tp // dp`); the log's `max_total_num_tokens=` line is one rank's.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

# bytes per element of the KV cache dtypes SGLang accepts for `--kv-cache-dtype` (and the model dtypes `auto` means)
DTYPE_BYTES = {
    "bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "half": 2, "float32": 4, "fp32": 4,
    "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8": 1, "float8_e4m3fn": 1, "float8_e5m2": 1,
}


class ModelConfig(BaseModel):
    """The KV-relevant part of a model's public `config.json` (field names as Hugging Face spells them)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="the model (or the public config it follows)")
    num_hidden_layers: int = Field(gt=0)
    num_key_value_heads: int = Field(default=0, ge=0, description="MHA/GQA; unused with MLA")
    head_dim: int = Field(default=0, ge=0)
    v_head_dim: int | None = Field(default=None, ge=0, description="defaults to head_dim")
    kv_lora_rank: int | None = Field(default=None, gt=0, description="set for MLA models")
    qk_rope_head_dim: int = Field(default=0, ge=0)
    torch_dtype: str = Field(default="bfloat16", description="the model's dtype (`--kv-cache-dtype auto`)")
    kv_cache_dtype: str = Field(default="auto", description="the KV cache dtype the deployment serves with")

    @model_validator(mode="after")
    def _shape(self) -> ModelConfig:
        if self.kv_lora_rank is None and (self.num_key_value_heads <= 0 or self.head_dim <= 0):
            raise ValueError("a non-MLA model needs num_key_value_heads and head_dim")
        for dtype in (self.torch_dtype, self.kv_cache_dtype):
            if dtype != "auto" and dtype not in DTYPE_BYTES:
                raise ValueError(f"unknown dtype {dtype!r} (known: {', '.join(sorted(DTYPE_BYTES))})")
        return self

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank is not None


def dtype_bytes(model: ModelConfig, kv_cache_dtype: str | None = None) -> int:
    """Element size of the KV cache: `--kv-cache-dtype` if given (not `auto`, and one the simulator knows), else the
    profile's, else the model's."""
    for dtype in (kv_cache_dtype, model.kv_cache_dtype):
        if dtype and dtype in DTYPE_BYTES:
            return DTYPE_BYTES[dtype]
    return DTYPE_BYTES[model.torch_dtype]


def cell_size(model: ModelConfig, attn_tp: int = 1, kv_cache_dtype: str | None = None) -> int:
    """KV bytes per token on one GPU of an attention-TP group of `attn_tp` GPUs (SGLang's `cell_size`)."""
    size = dtype_bytes(model, kv_cache_dtype)
    if model.is_mla:
        return (int(model.kv_lora_rank or 0) + model.qk_rope_head_dim) * model.num_hidden_layers * size
    heads = max(1, model.num_key_value_heads // max(1, attn_tp))
    v_head_dim = model.head_dim if model.v_head_dim is None else model.v_head_dim
    return heads * (model.head_dim + v_head_dim) * model.num_hidden_layers * size


def pool_tokens(hbm_bytes: float, mem_fraction_static: float, weight_bytes_per_gpu: float, cell: int,
                max_total_tokens: int | None = None, page_size: int = 1) -> int:
    """Tokens of one rank's GPU KV pool: the static share of memory less the weights, over the cell size,
    floored to `page_size` and capped by `--max-total-tokens` (SGLang's `max_total_num_tokens`)."""
    available = max(0, int(hbm_bytes * mem_fraction_static - weight_bytes_per_gpu))
    tokens = available // cell if cell > 0 else 0
    if max_total_tokens:
        tokens = min(tokens, int(max_total_tokens))
    page = max(1, page_size)
    return tokens // page * page

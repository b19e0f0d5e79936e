"""The import-only `sgl_kernel` stand-in of the real-SGLang CPU tier: imports succeed, calls fail naming the kernel."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

STAND_IN = Path(__file__).resolve().parents[2] / "tools" / "sglang_cpu" / "sgl_kernel" / "__init__.py"


def test_any_name_imports_and_every_call_raises_naming_the_kernel() -> None:
    spec = importlib.util.spec_from_file_location("sgl_kernel_stand_in", STAND_IN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    kernel = module.copy_all_layer_kv_cache_cpu   # a name SGLang's CPU path imports at module level
    assert kernel.__name__ == "copy_all_layer_kv_cache_cpu"
    with pytest.raises(NotImplementedError, match="SGLang called the CPU kernel 'copy_all_layer_kv_cache_cpu'"):
        kernel(1, 2)
    assert module.STAND_IN is True
    with pytest.raises(AttributeError):
        module.__wrapped__  # noqa: B018 (dunder lookups are not kernels)

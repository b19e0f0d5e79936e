"""Import-only stand-in for SGLang's CPU kernel package `sgl_kernel` (the harness's own code, not SGLang's).

SGLang's CPU kernels (`sgl-kernel` built with `pyproject_cpu.toml`) are not published on PyPI in any form. On
its plain-torch CPU path (`--device cpu --attention-backend torch_native`, a Llama model) SGLang imports a few
names from `sgl_kernel` at module level but never calls them. This package satisfies those imports and nothing
else: it registers no torch operator, and any name it hands out is a function that raises
`SglKernelStandInError` naming the kernel when called. A server log containing that error means SGLang needed a
real CPU kernel; the harness's tests fail on it, naming the kernel.
"""

from __future__ import annotations

from typing import Any, NoReturn

__version__ = "0.0.0+harness-import-only-stand-in"
STAND_IN = True
MARKER = "sgl_kernel stand-in: SGLang called the CPU kernel"


class SglKernelStandInError(NotImplementedError):
    """SGLang called a kernel that this import-only stand-in does not implement."""


def _missing(name: str) -> Any:
    def kernel(*args: Any, **kwargs: Any) -> NoReturn:
        raise SglKernelStandInError(f"{MARKER} {name!r}, which the import-only stand-in does not implement")

    kernel.__name__ = name
    kernel.__qualname__ = name
    return kernel


def __getattr__(name: str) -> Any:
    if name.startswith("__") and name.endswith("__"):
        raise AttributeError(name)
    return _missing(name)

"""What kind of run a result is, in words, where the engine and hardware fields alone could mislead.

A point served by real SGLang on a machine without a GPU (`engine: sglang`, `hardware.gpu: cpu`, the tier that
`tools/sglang-cpu-setup.sh` installs) runs SGLang's real server, scheduler, model code and HTTP/metrics contract on
its plain-torch CPU path with an import-only `sgl_kernel` stand-in: not SGLang's CPU kernels and never GPU numbers.
Records carry `engine_label` and reports print it beside the curve, as they print SIMULATED for the simulator.
"""

from __future__ import annotations

CPU_HW = "cpu"
CPU_LABEL = "real SGLang, plain-torch CPU path"


def engine_label(engine: str, hw: str) -> str | None:
    """The label of a real-SGLang CPU run; None for the simulator (labelled SIMULATED) and for GPU runs."""
    return CPU_LABEL if engine == "sglang" and hw == CPU_HW else None

"""The worker fingerprint as captured inside the server's environment: srt-slurm's probes, stdlib only.

This file runs on its own, without the harness installed: the harness passes its source to the server's
own interpreter through the server's own launcher (`PY -c <this file> MODEL_PATH`: the same local process
environment, docker image, enroot container, pyxis srun step or apptainer image the server runs in) and
reads one stdout line `HARNESS_FINGERPRINT_JSON {...}`.

Keys, shapes and probes follow the capture script srt-slurm injects into every worker
(`srtctl.core.fingerprint.generate_capture_script`, NVIDIA/srt-slurm commit
c88ef731636890ff6385a783e152c1790e15b194), so srt-slurm's `diff_fingerprints` reads the result:

    hostname        socket.gethostname()
    timestamp       UTC, "%Y-%m-%dT%H:%M:%SZ"
    arch            platform.machine()
    os              PRETTY_NAME of /etc/os-release, else platform.platform()
    cpu             {model, logical_cpus, affinity_cpus, affinity_list, slurm}
    gpu             {available: true, driver, gpus: [{name, driver, memory}]} from nvidia-smi's
                    `name,driver_version,memory.total` (memory as nvidia-smi prints it, "143771 MiB");
                    without nvidia-smi the same fields from NVML (libnvidia-ml); neither: {available: false}
    python_version  platform.python_version() of the server's interpreter
    cuda_version    the `release` line of `nvcc --version`, else "unavailable"
    nccl_version    `PY -c "import torch; print(torch.cuda.nccl.version())"`, else "unavailable"
    frameworks      {vllm, sglang, tensorrt_llm, dynamo: version} for those installed in PY
    model           {hf_revision, hf_repo, model_id} read from the model directory, or null
    env             CUDA_/SGLANG_/NCCL_/HF_/... variables, secret-looking names "***REDACTED***"
    pip_packages    {source: sorted `pip freeze` lines} for PY, python3, pip and uv on PATH
    packages_error  (the harness's, only when one failed) {source: why its freeze is not in pip_packages:
                    exit status and stderr, ran past FREEZE_TIMEOUT_S, or listed nothing}

It runs on Python 3.8 and later (images ship older Pythons than the harness). PY is the interpreter running
this file (the server's). Frameworks are read in-process with `importlib.metadata` (srt-slurm spawns PY for
the same call); a PATH `python3`/`pip` that is PY itself reuses PY's freeze instead of running it again; the
external probes run side by side, at the lowest CPU priority (`nice 19`), since the capture runs beside the
server. `capture` says how the GPU block was obtained (or why not) and which interpreter ran.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

MARKER = "HARNESS_FINGERPRINT_JSON "
UNAVAILABLE = "unavailable"
FRAMEWORK_PACKAGES = (("vllm", "vllm"), ("sglang", "sglang"), ("tensorrt_llm", "tensorrt-llm"),
                      ("dynamo", "ai-dynamo"))
ENV_PREFIXES = ("CUDA_", "TORCH_", "PYTORCH_", "NCCL_", "VLLM_", "SGLANG_", "SGL_", "TRTLLM_", "TRT_LLM_",
                "TENSORRT_", "HF_", "TRANSFORMERS_", "DYN_", "NVIDIA_", "OMPI_", "UCX_", "NVSHMEM_")
ENV_SECRETS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "CREDENTIAL", "AUTH")
CPU_SLURM_KEYS = ("SLURM_CPUS_ON_NODE", "SLURM_CPUS_PER_GPU", "SLURM_CPUS_PER_TASK", "SLURM_JOB_CPUS_PER_NODE")


FREEZE_TIMEOUT_S = 180.0   # a loaded node's `pip freeze` takes well over 30 s; the whole capture has 300 s


def run(argv: list[str], timeout: float = 30.0) -> str | None:
    """stdout (stripped) of a command that exited 0, else None; never raises."""
    return run_why(argv, timeout)[0]


def run_why(argv: list[str], timeout: float = 30.0) -> tuple[str | None, str]:
    """(stdout stripped, "") of a command that exited 0, else (None, why not); never raises."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, f"`{' '.join(argv)}` ran past {timeout:g} s"
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"`{' '.join(argv)}` did not run: {exc}"
    if r.returncode != 0:
        tail = " | ".join(r.stderr.strip().splitlines()[-2:])
        return None, f"`{' '.join(argv)}` exited {r.returncode}" + (f": {tail}" if tail else "")
    return r.stdout.strip(), ""


def _freeze_lines(out: str | None) -> list[str]:
    if not out:
        return []
    return sorted((ln.strip() for ln in out.splitlines() if ln.strip() and not ln.startswith("#")),
                  key=lambda s: s.lower())


def _same_interpreter(path: str | None, py: str) -> bool:
    """Whether `path` (a python, or a pip script whose shebang names one) is the interpreter `py`."""
    if not path:
        return False
    target = os.path.realpath(path)
    if not os.path.basename(target).startswith("python"):
        try:
            with open(target, "rb") as fh:
                first = fh.readline(512).decode(errors="replace")
        except OSError:
            return False
        if not first.startswith("#!"):
            return False
        parts = first[2:].split()
        target = os.path.realpath(parts[0]) if parts else ""
    return target == os.path.realpath(py)


def pip_packages(py: str, pool: ThreadPoolExecutor,
                 errors: dict[str, str] | None = None) -> dict[str, list[str]]:
    """srt-slurm's sources in its order: PY, then `python3`, `pip`, `uv` as found on PATH (run side by side).
    A source whose freeze failed, ran past its time or listed nothing is left out and named in `errors`."""
    def freeze(argv: list[str]) -> tuple[str | None, str]:
        return run_why(argv, FREEZE_TIMEOUT_S)

    jobs = {py: pool.submit(freeze, [py, "-m", "pip", "freeze"])}
    for label, tool, argv in (("python3", "python3", ["python3", "-m", "pip", "freeze"]),
                              ("pip", "pip", ["pip", "freeze"]), ("uv", "uv", ["uv", "pip", "freeze"])):
        found = shutil.which(tool)
        if found is not None and (label == "uv" or not _same_interpreter(found, py)):
            jobs[label] = pool.submit(freeze, argv)
        elif found is not None:
            jobs[label] = jobs[py]     # the same interpreter: the same freeze
    result: dict[str, list[str]] = {}
    for label, job in jobs.items():
        out, why = job.result()
        lines = _freeze_lines(out)
        if lines:
            result[label] = lines
        elif errors is not None:
            errors[label] = why or "listed no packages"
    return result


def gpu_from_smi() -> dict[str, Any] | None:
    out = run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"])
    if not out:
        return None
    gpus = []
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 3:
            gpus.append({"name": parts[0], "driver": parts[1], "memory": parts[2]})
    return {"available": True, "driver": gpus[0]["driver"] if gpus else "unknown", "gpus": gpus}


class _Memory(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


def gpu_from_nvml() -> tuple[dict[str, Any] | None, str]:
    """The same block from libnvidia-ml (memory in MiB, as nvidia-smi prints it), or None and why."""
    try:
        lib = ctypes.CDLL("libnvidia-ml.so.1")
    except OSError as exc:
        return None, f"libnvidia-ml.so.1 not loadable: {exc}"
    if lib.nvmlInit_v2() != 0:
        return None, "nvmlInit_v2 failed"
    try:
        buf = ctypes.create_string_buffer(96)
        driver = buf.value.decode() if lib.nvmlSystemGetDriverVersion(buf, 96) == 0 else "unknown"
        count = ctypes.c_uint(0)
        if lib.nvmlDeviceGetCount_v2(ctypes.byref(count)) != 0:
            return None, "nvmlDeviceGetCount_v2 failed"
        gpus = []
        for i in range(count.value):
            handle = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(handle)) != 0:
                return None, f"nvmlDeviceGetHandleByIndex_v2({i}) failed"
            name = ctypes.create_string_buffer(96)
            mem = _Memory()
            lib.nvmlDeviceGetName(handle, name, 96)
            memory = f"{mem.total // 2**20} MiB" if lib.nvmlDeviceGetMemoryInfo(handle, ctypes.byref(mem)) == 0 \
                else UNAVAILABLE
            gpus.append({"name": name.value.decode(errors="replace"), "driver": driver, "memory": memory})
        return {"available": True, "driver": driver, "gpus": gpus}, "nvml"
    finally:
        lib.nvmlShutdown()


def gpu_info() -> tuple[dict[str, Any], dict[str, str]]:
    smi = gpu_from_smi()
    if smi is not None:
        return smi, {"gpu_source": "nvidia-smi"}
    nvml, why = gpu_from_nvml()
    if nvml is not None:
        return nvml, {"gpu_source": "nvml", "gpu_reason": "nvidia-smi not found or failed"}
    return {"available": False}, {"gpu_source": "none", "gpu_reason": f"nvidia-smi not found or failed; {why}"}


def cpu_model(cpuinfo_text: str) -> str | None:
    arm: dict[str, str] = {}
    label = None
    for line in cpuinfo_text.splitlines():
        key, sep, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        if not sep or not value:
            continue
        if key in ("model name", "cpu model", "hardware"):
            return value
        if key == "processor" and not value.isdecimal():
            label = label or value
        elif key in ("cpu implementer", "cpu architecture", "cpu variant", "cpu part", "cpu revision"):
            arm.setdefault(key, value)
    if label:
        return label
    if not arm.get("cpu implementer") and not arm.get("cpu part"):
        return None
    pieces = ["ARM CPU"] + [f"{k} {arm[f'cpu {k}']}" for k in ("implementer", "part") if arm.get(f"cpu {k}")]
    details = ", ".join(f"{k} {arm[f'cpu {k}']}" for k in ("architecture", "variant", "revision")
                        if arm.get(f"cpu {k}"))
    return f"{' '.join(pieces)} ({details})" if details else " ".join(pieces)


def _cpu_ranges(ids: list[int]) -> str:
    ranges: list[str] = []
    start = prev = ids[0]
    for i in ids[1:]:
        if i == prev + 1:
            prev = i
            continue
        ranges.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    ranges.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(ranges)


def cpu_info() -> dict[str, Any]:
    cpuinfo = Path("/proc/cpuinfo")
    model = (cpu_model(cpuinfo.read_text(errors="replace")) if cpuinfo.exists() else None) or UNAVAILABLE
    try:
        ids = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        ids = []
    return {"model": model, "logical_cpus": os.cpu_count(), "affinity_cpus": len(ids) if ids else None,
            "affinity_list": _cpu_ranges(ids) if ids else None,
            "slurm": {k: os.environ[k] for k in CPU_SLURM_KEYS if k in os.environ}}


def os_name() -> str:
    release = Path("/etc/os-release")
    if release.exists():
        for line in release.read_text(errors="replace").splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    return platform.platform()


def frameworks() -> dict[str, str]:
    out: dict[str, str] = {}
    for name, dist in FRAMEWORK_PACKAGES:
        try:
            out[name] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def model_identity(model_path: str) -> dict[str, str] | None:
    mp = Path(model_path) if model_path else None
    if mp is None or not mp.exists():
        return None
    info: dict[str, str] = {}
    for refs in (mp / ".huggingface" / "refs" / "main", mp / "refs" / "main"):
        if refs.exists():
            info["hf_revision"] = refs.read_text().strip()
            break
    downloads = mp / ".cache" / "huggingface" / "download"
    if "hf_revision" not in info and downloads.is_dir():
        for meta in sorted(downloads.glob("*.metadata")):
            try:
                first = meta.read_text().splitlines()[0].strip()
            except (OSError, IndexError):
                continue
            if len(first) == 40 and all(c in "0123456789abcdef" for c in first):
                info["hf_revision"] = first
                break
    for name, keys in ((".huggingface/download_metadata.json", (("commit_hash", "hf_revision"),
                                                                 ("repo_id", "hf_repo"))),
                       ("config.json", (("_name_or_path", "model_id"),))):
        try:
            data = json.loads((mp / name).read_text())
        except (OSError, ValueError):
            continue
        for src, dst in keys:
            if isinstance(data, dict) and src in data:
                info[dst] = data[src]
    return info or None


def env_vars() -> dict[str, str]:
    return {k: ("***REDACTED***" if any(s in k.upper() for s in ENV_SECRETS) else v)
            for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)}


def capture(model_path: str) -> dict[str, Any]:
    py = sys.executable or "python3"
    with ThreadPoolExecutor(max_workers=8) as pool:   # the external probes run side by side
        gpu_job = pool.submit(gpu_info)
        nvcc = pool.submit(run, ["sh", "-c", "nvcc --version 2>/dev/null | grep release"])
        nccl = pool.submit(run, [py, "-c", "import torch; print(torch.cuda.nccl.version())"], 120)
        package_errors: dict[str, str] = {}
        packages = pip_packages(py, pool, package_errors)
        gpu, gpu_detail = gpu_job.result()
        errors = {"packages_error": package_errors} if package_errors else {}
        return {
            "hostname": socket.gethostname(),
            "timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),  # noqa: UP017 - Python 3.8+
            "arch": platform.machine(),
            "os": os_name(),
            "cpu": cpu_info(),
            "gpu": gpu,
            "python_version": platform.python_version(),
            "cuda_version": nvcc.result() or UNAVAILABLE,
            "nccl_version": nccl.result() or UNAVAILABLE,
            "frameworks": frameworks(),
            "model": model_identity(model_path),
            "env": env_vars(),
            "pip_packages": packages,
            **errors,
            "capture": {"python_executable": py, **gpu_detail, **errors},
        }


if __name__ == "__main__":
    try:   # lowest CPU priority (it and its `pip freeze` children): it runs beside the server
        os.nice(19)
    except OSError:
        pass
    print(MARKER + json.dumps(capture(sys.argv[1] if len(sys.argv) > 1 else "")), flush=True)

#!/usr/bin/env bash
# Check the worker fingerprint's `gpu` block on a machine with NVIDIA GPUs, using only the system Python.
#
#   bash tools/gpu_capture_check.sh [MODEL_PATH]      (from the repository root; nothing to install)
#
# Runs the harness's capture script (harness/point/fingerprints/fingerprint_capture.py, standard library only) twice with
# `python3`: once as it runs inside a server's environment (nvidia-smi on PATH), once with nvidia-smi hidden
# from PATH so the NVML fallback (libnvidia-ml.so.1 through ctypes) answers. Prints the first fingerprint in
# full, then checks: `gpu.available` is true, `gpu.gpus` lists what `nvidia-smi --query-gpu=name,driver_version,
# memory.total` lists, and the NVML fallback gives the same names, driver and memory. Exit 0 when all agree,
# 1 otherwise, 2 when this machine has no nvidia-smi.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
SCRIPT=harness/point/fingerprints/fingerprint_capture.py
MODEL=${1:-}
if ! command -v nvidia-smi >/dev/null; then
  echo "gpu_capture_check: no nvidia-smi on PATH: run this on a machine with NVIDIA GPUs" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$PY" "$SCRIPT" "$MODEL" >"$work/smi.out"
# The same capture with nvidia-smi hidden: a PATH of links to every other tool on it.
mkdir "$work/bin"
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -d "$d" ] || continue
  for f in "$d"/*; do
    name=$(basename "$f")
    [ "$name" = nvidia-smi ] || [ -e "$work/bin/$name" ] || ln -s "$f" "$work/bin/$name" 2>/dev/null || true
  done
done
PATH="$work/bin" "$PY" "$SCRIPT" "$MODEL" >"$work/nvml.out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$work/smi.csv"

"$PY" - "$work" <<'EOF'
import json
import sys
from pathlib import Path

work = Path(sys.argv[1])
MARKER = "HARNESS_FINGERPRINT_JSON "


def load(name):
    lines = [ln for ln in (work / name).read_text().splitlines() if ln.startswith(MARKER)]
    return json.loads(lines[-1][len(MARKER):])


smi_fp, nvml_fp = load("smi.out"), load("nvml.out")
shown = dict(smi_fp)
shown["pip_packages"] = {k: f"{len(v)} packages" for k, v in smi_fp["pip_packages"].items()}
print(json.dumps(shown, indent=2))

expected = [dict(zip(("name", "driver", "memory"), (p.strip() for p in ln.split(",")))) for ln in
            (work / "smi.csv").read_text().splitlines() if ln.strip()]
problems = []
gpu = smi_fp["gpu"]
if smi_fp["capture"].get("gpu_source") != "nvidia-smi":
    problems.append(f"capture with nvidia-smi on PATH used {smi_fp['capture']}")
if gpu.get("available") is not True or gpu.get("gpus") != expected:
    problems.append(f"gpu block {gpu} != nvidia-smi's {expected}")
if gpu.get("driver") != (expected[0]["driver"] if expected else None):
    problems.append(f"gpu.driver {gpu.get('driver')!r} != nvidia-smi's")
nvml = nvml_fp["gpu"]
print("\nNVML fallback (nvidia-smi hidden):", json.dumps(nvml), nvml_fp["capture"])
if nvml_fp["capture"].get("gpu_source") != "nvml":
    problems.append(f"with nvidia-smi hidden the capture used {nvml_fp['capture']}")
elif nvml != gpu:
    problems.append(f"NVML gave {nvml}, nvidia-smi {gpu}")
print()
for p in problems:
    print("MISMATCH:", p)
print(f"gpu_capture_check: {len(expected)} GPU(s), driver {gpu.get('driver')}, python {smi_fp['python_version']}: "
      + ("OK" if not problems else f"{len(problems)} problem(s)"))
sys.exit(1 if problems else 0)
EOF

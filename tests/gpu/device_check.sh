#!/usr/bin/env bash
# Power verification on a lent GPU machine (system python with torch, pytest and nvidia-ml-py):
# GPU tests, gpu_info, and `harness power sample` / `integrate` under an idle→load→idle pattern.
# Usage from the repository root: OUT=/some/dir bash tests/gpu/device_check.sh
# Everything lands in $OUT/power-work.tgz; the summary files also sit directly in $OUT.
set -u -o pipefail
OUT=${OUT:-/tmp/power-out}
W=$(mktemp -d)
mkdir -p "$OUT" "$W/cli"
export PYTHONPATH=.${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 POWER_GPU_OUT="$W"
PY=${PY:-python3}
# shellcheck source=tools/background.sh
source tools/background.sh
trap stop_background EXIT   # the sampler is stopped however the script ends
{
  nvidia-smi --query-gpu=index,uuid,name,driver_version,power.draw,power.limit --format=csv
  $PY -c 'import sys, pynvml, torch; print(sys.version.split()[0], "torch", torch.__version__, "nvml", pynvml.__version__ if hasattr(pynvml, "__version__") else "?")'
  $PY -c 'import json; from harness.power.gpu_info import gpu_inventory; print(json.dumps(gpu_inventory(), indent=1))'
} 2>&1 | tee "$W/env.txt"

$PY -m pytest -q -s -p no:cacheprovider tests/gpu 2>&1 | tee "$W/pytest_gpu.txt"
status=${PIPESTATUS[0]}

# CLI: sample 16 s; a bf16 matmul load runs for 5 s once torch is up (inside the sampling);
# integrate the whole sampling window (idle -> load -> idle) and the steady loaded part.
$PY -m harness power sample --seconds 16 --out "$W/cli/power.csv" >"$W/cli/sample.txt" 2>&1 &
sampler=$!
background "$sampler"
sleep 1
$PY - >"$W/cli/load.txt" <<'PY'
import time, torch
a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda"); b = torch.randn_like(a)
torch.cuda.synchronize(); time.sleep(2.0); t0 = time.monotonic(); start = None
while time.monotonic() - t0 < 5.0:
    for _ in range(20): torch.matmul(a, b)
    torch.cuda.synchronize()
    if start is None and time.monotonic() - t0 > 1.5: start = time.time_ns()
print(start, time.time_ns())
PY
wait $sampler
cat "$W/cli/sample.txt"
read -r A B < <(sed -n 's/^window: --start-ns \([0-9]*\) --end-ns \([0-9]*\)$/\1 \2/p' "$W/cli/sample.txt")
read -r LA LB < "$W/cli/load.txt"
run() { echo "\$ harness power integrate $*"; $PY -m harness power integrate "$@"; echo "rc=$?"; }
echo "--- whole sampling window (idle -> load -> idle), reference duration = wall span"
run "$W/cli/power.csv" --start-ns "$A" --end-ns "$B" --expected-gpus 1 \
  --reference-duration-s "$(python3 -c "print(($B-$A)/1e9)")" --validation-out "$W/cli/power_validation.json"
echo "--- steady loaded part"
run "$W/cli/power.csv" --start-ns "$LA" --end-ns "$LB" --expected-gpus 1
echo "--- loaded part as JSON"
$PY -m harness power integrate "$W/cli/power.csv" --start-ns "$LA" --end-ns "$LB" --json > "$W/cli/load_validation.json"
grep -E '"(power_valid|avg_power_w|counter_energy_j|trapezoid_energy_j|counter_vs_trapezoid_rel_diff)"' "$W/cli/load_validation.json"
echo "--- must be invalid: 2 GPUs expected; reference clock 2 s shorter"
run "$W/cli/power.csv" --start-ns "$LA" --end-ns "$LB" --expected-gpus 2
run "$W/cli/power.csv" --start-ns "$A" --end-ns "$B" --reference-duration-s "$(python3 -c "print(($B-$A)/1e9-2)")"
echo "--- must be invalid: window reaches past the last sample"
run "$W/cli/power.csv" --start-ns "$A" --end-ns "$((B + 5000000000))"
cp "$W/env.txt" "$W/pytest_gpu.txt" "$OUT/" 2>/dev/null
cp "$W/power_gpu_figures.json" "$OUT/" 2>/dev/null
tar czf "$OUT/power-work.tgz" -C "$W" .
exit "$status"

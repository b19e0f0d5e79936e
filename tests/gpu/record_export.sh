#!/usr/bin/env bash
# On a lent GPU machine: one point with real measured power, exported as InferenceX's artifacts; then the
# client-timing benchmark. What it writes under $OUT is what tests/fixtures/h200-export holds.
#
# The embedded simulator serves and real AIPerf replays the quick start's c4 for 60 s while NVML samples the
# real GPU; a bf16 matmul load alternates with idle beside it (4 s on, 3 s off), so the GPU draws real, varying
# power inside the window (the serving is simulated: the row says `hw: sim`; its power is measured).
# `harness export --inferencex --include-unofficial` then lays the point out as InferenceX uploads it; the
# export is packed as $OUT/h200-export.tar. Then `benchmarks/timing_error.py` with TIMING_ARGS.
# Wheels the machine lacks travel in .whl/ (installed into /tmp/site).
# Usage from the repository root: OUT=/some/dir TIMING_ARGS="--conc 48 --duration 120" bash tests/gpu/record_export.sh
set -u -o pipefail
OUT=${OUT:-/tmp/record-out}
W=$(mktemp -d)
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 9
fi
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
python3 -c 'import aiperf, pynvml, pydantic; print("modules ok")' || exit 9
nvidia-smi --query-gpu=index,uuid,pci.bus_id,name,driver_version,power.draw,power.limit --format=csv | tee "$OUT/env.txt"
nproc | sed 's/^/cores: /' | tee -a "$OUT/env.txt"

# shellcheck source=tools/background.sh
source tools/background.sh
trap stop_background EXIT   # the GPU load is stopped however the script ends
touch "$W/load.on"
python3 - "$W/load.on" >"$W/load.txt" 2>&1 <<'PY' &
import os, sys, time, torch
a = torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda"); b = torch.randn_like(a)
while os.path.exists(sys.argv[1]):
    t0 = time.monotonic()
    while time.monotonic() - t0 < 4.0:
        for _ in range(10): torch.matmul(a, b)
        torch.cuda.synchronize()
    time.sleep(3.0)
PY
load=$!
background "$load"
python3 -m harness run recipes/quickstart-sim.yaml --point c4 --duration 60 --out "$W/run" 2>&1 | tee "$OUT/run.txt"
rm -f "$W/load.on"; wait $load
python3 -m harness export --inferencex --include-unofficial "$W/run" "$W/h200-export" 2>&1 | tee -a "$OUT/run.txt"
tar -C "$W" -cf "$OUT/h200-export.tar" h200-export
PDIR=$(dirname "$(find "$W/run" -name point_result.json | head -1)")
cp "$PDIR/point_result.json" "$OUT/point_result.json"

if [ -n "${TIMING_ARGS:-}" ]; then
  # shellcheck disable=SC2086
  python3 benchmarks/timing_error.py $TIMING_ARGS --out "$W/timing" 2>&1 | tee "$OUT/timing.txt"
  cp "$W/timing/summary.json" "$OUT/timing-summary.json" 2>/dev/null
fi

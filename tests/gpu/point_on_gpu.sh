#!/usr/bin/env bash
# One whole point on a lent GPU machine, then InferenceX's own code on what it wrote.
#
# The embedded simulator serves (it does no GPU work) and real AIPerf replays the quickstart traces while
# NVML samples the real GPU; a bf16 matmul load alternates with idle beside it, so the GPU draws real,
# varying power inside the window. The published row therefore says `hw: sim` (the serving was simulated)
# with real measured power. Afterwards:
#   - InferenceX's agentic power adapter (utils/agentic/aggregation/power_adapter.py + utils/aggregate_power.py)
#     integrates our gpu_metrics.csv over AIPerf's window and patches a copy of our row; the energies
#     and per-token figures are compared with ours;
#   - InferenceX's p75/p90 (`_percentile_total_power` of its inferencex-e2e power package) on our power.csv;
#   - InferenceX's result contract (infx.results.collect_results) reads the row.
# Inputs beside the tree (ignored by git): .whl/ (wheels the image lacks, installed into /tmp/site) and
# .ixp/utils (InferenceX's utils/ at a recorded commit), .ixp/contract (its inferencex-e2e contract files,
# with infx/results/power/{__init__,common}.py; commits in tests/fixtures/h200-power/README.md).
# Usage from the repository root: OUT=/some/dir bash tests/gpu/point_on_gpu.sh
set -u -o pipefail
OUT=${OUT:-/tmp/point-out}
W=$(mktemp -d)
mkdir -p "$OUT"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 9
fi
export PYTHONPATH=/tmp/site:$PWD PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
python3 -c 'import aiperf, pyarrow, pynvml, pydantic; print("modules ok")' || exit 9
nvidia-smi --query-gpu=index,uuid,name,driver_version,power.draw,power.limit --format=csv | tee "$OUT/env.txt"

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
print("load stopped", time.time())
PY
load=$!
background "$load"
python3 -m harness run recipes/quickstart-sim.yaml --point c4 --duration 60 --out "$W/run" 2>&1 | tee "$OUT/run.txt"
rc=${PIPESTATUS[0]}
rm -f "$W/load.on"; wait $load
PDIR=$(dirname "$(find "$W/run" -name point_result.json | head -1)")
echo "point dir: $PDIR (harness run rc=$rc)"

# InferenceX's layout for its power adapter: result dir with aiperf_artifacts/, gpu_metrics.csv, tz offset.
IX="$W/ix"; mkdir -p "$IX/aiperf_artifacts" "$W/rows"
cp -r "$PDIR"/aiperf/. "$IX/aiperf_artifacts/"
cp "$PDIR/gpu_metrics.csv" "$PDIR/agentic_power_timezone_offset.txt" "$IX/"
ROW=$(ls "$PDIR"/bmk_agentic_*.json)
cp "$ROW" "$W/rows/"
python3 - "$ROW" "$IX" "$PDIR" <<'PY' 2>&1 | tee "$OUT/compare.txt"
import csv, json, sys
from pathlib import Path
row_path, ix, pdir = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
row = json.loads(row_path.read_text())
record = json.loads((pdir / "point_result.json").read_text())
power_keys = [k for k in row if k.startswith(("avg_", "p75_", "p90_", "total_gpu", "joules_"))]
agg = {k: v for k, v in row.items() if k not in power_keys}
(ix / "agg.json").write_text(json.dumps(agg))
sys.path.insert(0, ".ixp")
from utils.agentic.aggregation.power_adapter import run_agentic_power
rc = run_agentic_power(result_dir=ix, agg_result=ix / "agg.json", expected_num_gpus=1)
theirs = json.loads((ix / "agg.json").read_text())
sidecar = json.loads((ix / "power_validation.json").read_text())
print("InferenceX power adapter rc", rc, "power_valid", theirs.get("power_valid"), "reasons", sidecar.get("reasons"))
print("ours: power_valid", row.get("power_valid"), "record power_inferencex reasons",
      record["power_inferencex"]["reasons"], "our-window power_valid", record.get("power_valid"),
      record.get("power_invalid_reasons"))
for k in ("avg_power_w", "avg_total_gpu_power_w", "total_gpu_energy_j", "joules_per_successful_query",
          "joules_per_input_token", "joules_per_output_token", "joules_per_total_token"):
    a, b = row.get(k), theirs.get(k)
    rel = None if not (a and b) else abs(a - b) / abs(b)
    print(f"{k:30s} ours {a!s:>14} InferenceX {b!s:>14} rel.diff {rel}")
sys.path.insert(0, ".ixp/contract")
from infx.results.power.common import _percentile_total_power
w = record["power_inferencex"]
series = {}
with open(pdir / "power.csv") as f:
    for r in csv.DictReader(f):
        series.setdefault(r["gpu_uuid"], []).append((int(r["timestamp_ns"]) / 1e9, float(r["power_w"])))
gpus = [sorted(v) for v in series.values()]
for q, k in ((0.75, "p75_total_gpu_power_w"), (0.9, "p90_total_gpu_power_w")) if gpus and w.get("start_ns") else ():
    t = _percentile_total_power(gpus, start_unix=w["start_ns"] / 1e9, end_unix=w["end_ns"] / 1e9, quantile=q)
    print(f"{k:30s} ours {row.get(k)!s:>14} InferenceX _percentile_total_power {round(t, 3)}")
print("our window:", record.get("power_window"), "energy", record.get("total_gpu_energy_j"),
      "| InferenceX window energy", w["metrics"].get("total_gpu_energy_j"))
print("gpu_telemetry all:", json.dumps((record.get("gpu_telemetry") or {}).get("all")))
PY
echo "--- InferenceX's result contract on the row"
(cd "$W" && PYTHONPATH=/tmp/site:$OLDPWD/.ixp/contract python3 -m infx.results.collect_results rows h200; echo "collect_results rc=$?"; \
  python3 -c "import json; a=json.load(open('agg_h200.json')); print(len(a), 'row(s) accepted;', {k: a[0].get(k) for k in ('hw','power_valid','avg_power_w','p90_power_w','total_gpu_energy_j')} if a else '')") 2>&1 | tee "$OUT/contract.txt"
cp "$ROW" "$PDIR/point_result.json" "$PDIR/power_validation.json" "$OUT/" 2>/dev/null
tar czf "$OUT/point-work.tgz" -C "$W" run ix rows load.txt 2>/dev/null
exit "$rc"

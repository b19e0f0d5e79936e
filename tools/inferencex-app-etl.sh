#!/usr/bin/env bash
# inferencex-app-etl.sh -- run InferenceX-app's AgentX server-metrics ETL on a `harness export --inferencex` directory.
#
# Usage:  INFERENCEX_APP=/path/to/InferenceX-app bash tools/inferencex-app-etl.sh EXPORT_DIR
#
# Prints, per exported point, the nine server metrics the app recomputes from our export and discards from the row
# (KV pool and its prefill/decode parts, GPU/CPU/external cache hit rates, KV usage, prompt and generation token
# totals), and why the pool is null where it is. The app's own TypeScript (packages/db/src/etl/agentx-server-metrics)
# runs unchanged under tsx, installed from npm into HARNESS_TSX_DIR (default ~/.cache/harness/tsx) when missing.
# Checked against InferenceX-app de8cb30f (index.ts, sglang.ts, scrape.ts, vllm.ts) and d03bd01e (types.ts,
# trtllm.ts, atom.ts).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
EXPORT_DIR=${1:?usage: INFERENCEX_APP=CHECKOUT $0 EXPORT_DIR}
: "${INFERENCEX_APP:?set INFERENCEX_APP to an InferenceX-app checkout}"
if [ ! -f "$INFERENCEX_APP/packages/db/src/etl/agentx-server-metrics/index.ts" ]; then
  echo "error: $INFERENCEX_APP has no packages/db/src/etl/agentx-server-metrics/index.ts" >&2; exit 2
fi
TSX_DIR=${HARNESS_TSX_DIR:-${HOME:-/root}/.cache/harness/tsx}
if [ ! -x "$TSX_DIR/node_modules/.bin/tsx" ]; then
  command -v npm >/dev/null || { echo "error: npm not found (apt-get install npm)" >&2; exit 2; }
  mkdir -p "$TSX_DIR"
  npm install --silent --no-audit --no-fund --prefix "$TSX_DIR" tsx@4.23.15 >/dev/null
fi
exec "$TSX_DIR/node_modules/.bin/tsx" "$HERE/inferencex_app_etl/derive.mts" "$EXPORT_DIR"

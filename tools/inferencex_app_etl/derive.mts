/**
 * Runs InferenceX-app's AgentX server-metrics ETL (`packages/db/src/etl/agentx-server-metrics`, from a checkout
 * named by INFERENCEX_APP) on every point of a `harness export --inferencex` directory, exactly as the app's
 * ingest feeds it: the row's config, AIPerf's `server_metrics_export.csv` and the startup lines of the stored
 * server logs. Prints one JSON object: point name -> {metrics, kvPoolReason}.
 *
 * Usage: INFERENCEX_APP=/path/to/InferenceX-app tsx derive.mts EXPORT_DIR
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const app = process.env.INFERENCEX_APP;
const exportDir = process.argv[2];
if (!app || !exportDir) {
  console.error('usage: INFERENCEX_APP=CHECKOUT tsx derive.mts EXPORT_DIR');
  process.exit(2);
}
const etl = await import(
  pathToFileURL(join(app, 'packages/db/src/etl/agentx-server-metrics/index.ts')).href
);

type Row = Record<string, any>;
const num = (v: unknown, fallback: number): number => (typeof v === 'number' ? v : fallback);

function config(row: Row) {
  const framework = String(row.framework ?? '').toLowerCase();
  if (!row.is_multinode) {
    const tp = num(row.tp, 1);
    const dpAttn = String(row.dp_attention) === 'true';
    return { framework, disagg: false, prefillTp: tp, prefillDpAttn: dpAttn, prefillNumWorkers: 1,
             decodeTp: tp, decodeDpAttn: dpAttn, decodeNumWorkers: 1 };
  }
  return {
    framework, disagg: Boolean(row.disagg),
    prefillTp: num(row.prefill_tp, 1), prefillDpAttn: String(row.prefill_dp_attention) === 'true',
    prefillNumWorkers: num(row.prefill_num_workers, 1),
    decodeTp: num(row.decode_tp, 1), decodeDpAttn: String(row.decode_dp_attention) === 'true',
    decodeNumWorkers: num(row.decode_num_workers, 1),
  };
}

const out: Record<string, unknown> = {};
for (const entry of readdirSync(exportDir).sort()) {
  if (!entry.startsWith('bmk_agentic_')) continue;
  const name = entry.slice('bmk_agentic_'.length);
  const row: Row = JSON.parse(readFileSync(join(exportDir, entry, `${entry}.json`), 'utf8'));
  const csvPath = join(exportDir, `agentic_${name}`, 'aiperf_artifacts', 'server_metrics_export.csv');
  const logDir = join(exportDir, `server_logs_${name}`);
  const cfg = config(row);
  const logFiles = existsSync(logDir)
    ? readdirSync(logDir).sort().map((fileName) => ({
        fileName,
        lines: etl.extractStartupLines(readFileSync(join(logDir, fileName), 'utf8'), cfg.framework),
      }))
    : null;
  const tokens = row.request_metrics?.tokens ?? {};
  const metrics = {
    total_requests_completed: row.num_requests_successful,
    mean_input_tokens: tokens.input?.mean,
    mean_output_tokens_actual: tokens.output_actual?.mean,
  };
  const input = etl.agentxServerMetricsInput(cfg, metrics, {
    scrapeCsv: existsSync(csvPath) ? readFileSync(csvPath, 'utf8') : null,
    logFiles,
  });
  out[name] = etl.deriveAgentxServerMetrics(input);
}
console.log(JSON.stringify(out, null, 1));

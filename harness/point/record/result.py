"""A point's result: what the client and the server left behind → the files of the point directory.

- `point_result.json`: our own record (state, validity verdict with its thresholds, p99, achieved
  concurrency, accept length, cancellations at the cutoff, overrides, engine, client settings, power over
  our window). `report`, `compare`, `check`, `status` and Slurm read this file.
- `bmk_agentic_<config_key>_conc<N>.json`: the published row, exactly one InferenceX AgentX row
  (`harness.point.record.inferencex_row`), written only for a completed point (the record's `row` names it; null
  for a failed or cancelled point, whose directory holds nothing that InferenceX's collectors, which take every
  `bmk_agentic_*.json` under a run, would read as a result). A simulated point records and publishes `hw: sim`,
  never a real GPU name (our record keeps the recipe's GPU type as `recipe_hw`).
- `aiperf/request_samples.bin`: the E2EL and TTFT samples a report plots, beside the per-request records they
  come from (`harness.point.record.samples_file`).

Built for every point that got as far as the client, completed or not (a failed or cancelled point keeps
its partial result in its record, marked invalid, and has no published row).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.artifacts import read_json, write_foreign_json, write_json
from harness.errors import UserError
from harness.point.record import inferencex_row, publishable, result_fields, samples_file
from harness.point.record.accept_length import expected_measured
from harness.point.record.engine_label import engine_label
from harness.point.record.judged import NOT_JUDGED, Judging, judged_fields
from harness.point.record.multinode_row import (
    deployment_shape,
    is_multinode,
    multinode_fields,
    multinode_row,
)
from harness.point.record.router_version import read_fingerprint, router_metadata
from harness.point.record.server_queue import server_queue
from harness.point.record.stability import stability_metrics
from harness.point.record.stickiness import stickiness
from harness.point.record.validity import verdict, window_clock
from harness.point.replay import aiperf
from harness.point.replay.aiperf_check import ClientTool
from harness.point.replay.client_phase import NOT_TIMED, ProfilingClock
from harness.point.servers.node_power import power_csvs
from harness.point.servers.server_env import SERVER_ENV_FILE
from harness.point.servers.server_logs import member_label, member_log_name, worker_logs
from harness.point.servers.server_metrics import achieved_accept_length
from harness.point.state.variant import VARIANTS_DIR
from harness.power.inferencex_audit import at_audit_precision, inferencex_reasons, power_validation
from harness.power.inferencex_evidence import write_evidence
from harness.power.inferencex_window import aiperf_window_ns, benchmark_window, inferencex_block
from harness.power.integrate import integrate_samples
from harness.power.samples import read_telemetry
from harness.power.telemetry import telemetry_summary
from harness.recipe.golden import draft_length
from harness.recipe.multinode.deployment import DeploymentPlan
from harness.recipe.plan import PointPlan
from harness.recipe.server_flags.server_args import dp_attention_size
from harness.recipe.thresholds import Thresholds


def point_dir(out_dir: Path, plan: PointPlan, variant: str | None = None) -> Path:
    """`<out>/<config_key>/conc<N>`, or `<out>/<config_key>/variants/<variant>/conc<N>` for a variant."""

    base = Path(out_dir) / plan.config_key
    return (base / VARIANTS_DIR / variant if variant else base) / f"conc{plan.conc}"


RECORD_FILE = "point_result.json"
OUR_POWER_WINDOW = "first_successful_request_start_to_last_successful_request_end"
RECORD_SCHEMA_VERSION = 1


def result_name(plan: PointPlan) -> str:
    return f"bmk_agentic_{plan.config_key}_conc{plan.conc}"


def spec_decoding_label(algorithm: Any) -> str:
    """InferenceX's `spec_decoding` words: NEXTN is MTP; no algorithm is `none`."""
    if not algorithm:
        return "none"
    return {"NEXTN": "mtp"}.get(str(algorithm).upper(), str(algorithm).lower())


def build_point_result(plan: PointPlan, *, overrides: tuple[str, ...], labels: dict[str, Any],
                       thresholds: Thresholds, pdir: Path, artifact_dir: Path, client_run: Any,
                       profiling: ProfilingClock = NOT_TIMED, metrics_before: dict[str, float] | None,
                       metrics_after: dict[str, float] | None,
                       state: str, reason: str | None, corpus: dict[str, Any],
                       tokenizer: dict[str, str] | None = None,
                       client_tool: ClientTool | None = None,
                       deployment_run: dict[str, Any] | None = None,
                       judging: Judging = NOT_JUDGED,
                       ) -> tuple[dict[str, Any] | None, Path | None]:
    """Build and write the result from whatever the client left (also for failed/cancelled points).
    `profiling`: AIPerf's profiling phase on the monotonic clock (`harness.point.record.validity.window_clock`).
    `client_tool`: the distribution that provides the `aiperf` that ran. `deployment_run` says which deployment a
    point ran on when the sweep reused one. `judging`: the request SLO and price (`harness.point.record.judged`)."""
    summary = aiperf.read_summary(artifact_dir)
    records_stamp = samples_file.stamp(artifact_dir / aiperf.RECORDS_FILE)
    raw_records = aiperf.read_records(artifact_dir)
    if raw_records:   # the report's latency samples, so that it need not parse the records again
        samples_file.write_samples_file(artifact_dir / aiperf.RECORDS_FILE, raw_records, records_stamp)
    if summary is None and not raw_records:
        return None, None
    records = [result_fields.parse_record(r) for r in raw_records]
    counts = aiperf.read_phase_counts(artifact_dir)
    cancelled = None if counts is None else counts["cancelled"]
    accounting = result_fields.request_accounting(records, cancelled)
    metrics = result_fields.request_metrics(records, plan.resources.num_gpus)
    settings = plan.settings
    args = server_args(plan)
    overflow = (summary or {}).get("context_overflow_count")
    target = _target_accept_length(plan)
    achieved, al_reason = achieved_accept_length(metrics_before, metrics_after) if target else (None, None)
    expected = _expected_accept_length(plan, target, [r.output_tokens for r in records
                                                      if r.ok and r.output_tokens is not None])
    result: dict[str, Any] = {
        "config_key": plan.config_key,
        "name": result_name(plan),
        "engine": plan.server.engine,
        "simulated": plan.server.engine == "sim",
        "engine_label": engine_label(plan.server.engine, plan.resources.gpu),   # real SGLang on CPU says so
        "conc": plan.conc,
        "image": plan.image,
        "model": args.get("model-path"),
        "infmax_model_prefix": plan.model_prefix,   # the model as InferenceX names it (its series' model)
        "served_model_name": plan.client.served_model_name,
        "framework": "sglang",
        "precision": settings.get("precision"),
        "spec_decoding": spec_decoding_label(args.get("speculative-algorithm")),
        "tp": int(args.get("tp-size", 1)),
        "ep": int(args.get("ep-size", 1)),
        "pp": int(args.get("pp-size", 1)),
        "kv_offloading": "dram" if args.get("enable-hierarchical-cache") else "none",
        "dp_attention": dp_attention_size(args) > 1,
        "inferencex_spec_decoding": _inferencex_spec_decoding(args),   # the published row's label
        "num_gpus": plan.resources.num_gpus,
        "hw": inferencex_row.SIM_HW if plan.server.engine == "sim" else plan.resources.gpu,  # never a real GPU
        "recipe_hw": plan.resources.gpu,   # the hardware the recipe is written for
        "recipe_fingerprint": plan.fingerprint,
        "scenario_type": "agentic-coding",
        "state": state,
        "state_reason": reason,
        "overrides": list(overrides),
        **labels,   # variant, tag, note, harness_commit
        "num_requests_total": accounting["records_profiled"] + (cancelled or 0),
        "num_requests_successful": accounting["successful"],
        "request_accounting": accounting,
        "request_metrics": metrics,
        "achieved_concurrency": result_fields.achieved_concurrency(records),
        # InferenceX's window drift and workload concentration over its own records and the configured duration
        "stability": stability_metrics(raw_records, plan.client.duration_s),
        "context_overflow_count": int(overflow.get("avg") or 0) if isinstance(overflow, dict) else 0,
        "speculative_acceptance": {"target": target, "expected": expected, "achieved": achieved,
                                   "reason": al_reason}
        if target else None,
        "client": {"tool": client_identity(client_tool, summary),
                   "scenario": plan.client.scenario,
                   "aiperf_exit_code": None if client_run is None else client_run.exit_code,
                   "aiperf_stopped": None if client_run is None else client_run.stopped,
                   "aiperf_was_cancelled": (summary or {}).get("was_cancelled"),
                   "aiperf_benchmark_duration_s": ((summary or {}).get("benchmark_duration") or {}).get("avg"),
                   "aiperf_unsafe_override": plan.client.unofficial,
                   "warmup_requests_per_lane": plan.client.warmup_requests_per_lane,   # None: the scenario's own
                   "burst_phase_starts": plan.client.burst_phase_starts,
                   "workers": plan.client.workers, "record_processors": plan.client.record_processors,
                   "requested_duration_s": plan.client.duration_s,
                   "corpus": corpus,
                   "tokenizer": tokenizer},
        "fingerprint": _fingerprint_summary(pdir / first_fingerprint_name(plan)),
        "server_env": _server_env(pdir),
    }
    router: dict[str, str] | None = None   # the row's router metadata, as measured
    if plan.deployment is not None:
        result.update(deployment_fields(plan.deployment, deployment_run))
        # AIPerf's first-turn-prefix cache-bust marker is a digest over this id: a point reusing a deployment
        # never hits the KV cache of the one before
        result["deployment"]["run"]["aiperf_benchmark_id"] = (summary or {}).get("benchmark_id")
        router, why = deployment_router(plan, pdir)
        result["deployment"]["router"].update({"version": router["version"]} if router else
                                              {"version": None, "version_reason": why})
    expected = None if plan.server.engine == "sim" else plan.resources.num_gpus
    result.update(_power_fields(pdir, metrics, accounting, expected,
                                result["client"]["aiperf_benchmark_duration_s"], summary))
    if state == "completed" and thresholds.require_power and not result.get("power_valid"):
        # strict mode: the power audit files are written by now; the point itself fails
        result["state"] = "failed"
        result["state_reason"] = "power_invalid: " + ", ".join(result.get("power_invalid_reasons") or ["unknown"])
    result.update(judged_fields(records, cancelled, plan.resources.num_gpus, result, judging))
    result["aiperf_submission"] = publishable.aiperf_submission(summary)
    server_metrics_export = aiperf.read_server_metrics(artifact_dir)
    result["server_metrics_sglang"] = None if server_metrics_export is None else \
        aiperf.has_sglang_series(server_metrics_export)
    result["server_queue"] = server_queue(server_metrics_export)
    result["window_clock"] = window_clock(metrics, plan.client.duration_s, plan.client.grace_s, profiling, summary)
    result["validity"] = verdict(result, plan.client.duration_s, thresholds)
    if result["state"] != "completed":
        result["validity"]["valid"] = False
        result["validity"]["reasons"].insert(0, {"code": f"point_{result['state']}",
                                                 "message": result["state_reason"] or result["state"]})
    result["schema_version"] = RECORD_SCHEMA_VERSION
    # the published row only for a completed point: InferenceX's collectors take every `bmk_agentic_*.json` under a
    # run as a result, so a failed or cancelled point leaves none (its record keeps what was measured)
    result["row"] = f"{result_name(plan)}.json" if result["state"] == "completed" else None
    result["publishable"] = publishable.assess(result)
    row = _published_row(plan, result, raw_records, summary, pool_logs(plan, pdir, deployment_run),
                         metrics_after, server_metrics_export, router)
    if result["row"] is not None:
        write_foreign_json(pdir / result["row"], row)
    if plan.deployment is not None:
        result["deployment"]["affinity"] = affinity(plan.deployment, deployment_log_dir(pdir, deployment_run),
                                                    raw_records, row)
    path = write_json(pdir / RECORD_FILE, result)
    return result, path


def client_identity(tool: ClientTool | None, summary: dict[str, Any] | None) -> dict[str, str | None]:
    """The client that measured the point: its distribution (`agentx-harness`) and the version its own summary
    names (`aiperf_version`), else the installed one."""
    ran = (summary or {}).get("aiperf_version")
    known = tool or ClientTool(None, None)
    return {"name": known.name, "version": str(ran) if ran else known.version}


def first_fingerprint_name(plan: PointPlan) -> str:
    """The fingerprint a point's record summarizes: its server's, or its deployment's first worker's."""
    if plan.deployment is None:
        return "fingerprint_agg_w0.json"
    return f"fingerprint_{member_label(plan.deployment.roles[0].role, 0, 0)}.json"


def deployment_router(plan: PointPlan, pdir: Path) -> tuple[dict[str, str] | None, str | None]:
    """The router's name and its version as installed where the first worker ran (its fingerprint), or None and
    why (`harness.point.record.router_version`)."""
    assert plan.deployment is not None
    return router_metadata(plan.deployment.router.kind, read_fingerprint(pdir / first_fingerprint_name(plan)))


def deployment_log_dir(pdir: Path, deployment_run: dict[str, Any] | None) -> Path:
    """Where a deployment's members log: the point directory, or the one of the point that started the
    deployment the sweep reused."""
    return Path((deployment_run or {}).get("started_in") or pdir)


def pool_logs(plan: PointPlan, pdir: Path, deployment_run: dict[str, Any] | None) -> list[Path]:
    """The logs whose `max_total_num_tokens=` lines make the row's KV pool: the server's; a deployment's every
    worker node's, prefill and decode alike, summed as InferenceX's multi-node aggregator sums its workers'
    logs (`find_server_log_paths`, `sum_server_log_capacities` at 843c6254)."""
    if plan.deployment is None:
        return [pdir / "server.log"]
    return worker_logs(plan.deployment, deployment_log_dir(pdir, deployment_run))


def _inferencex_spec_decoding(args: dict[str, Any]) -> str:
    return inferencex_row.spec_decoding(args)


def _published_row(plan: PointPlan, result: dict[str, Any], raw_records: list[dict[str, Any]],
                   summary: dict[str, Any] | None, logs: list[Path],
                   counters: dict[str, float] | None,
                   server_metrics_export: dict[str, Any] | None = None,
                   router: dict[str, str] | None = None) -> dict[str, Any]:

    args = server_args(plan)
    simulated = plan.server.engine == "sim"
    tp = int(args.get("tp-size", 1))
    hicache = bool(args.get("enable-hierarchical-cache"))
    version = plan.settings.get("sglang_version") or (plan.settings.get("server") or {}).get("sglang_version")
    backend: dict[str, str] | None = None
    if hicache:
        backend = {"name": "hicache"}
        if version:
            backend["version"] = str(version)
    size = args.get("hicache-size")
    dram_gb = int(round(float(size) * tp)) if hicache and isinstance(size, (int, float)) else 0
    model = str(args.get("model-path") or "")
    prefix = plan.model_prefix
    identity = {
        "hw": inferencex_row.SIM_HW if simulated else plan.resources.gpu,
        "conc": plan.conc, "image": plan.image, "recipe_fingerprint": plan.fingerprint, "model": model,
        "infmax_model_prefix": prefix, "framework": "sglang", "precision": str(plan.settings.get("precision")),
        "spec_decoding": inferencex_row.spec_decoding(args), "tp": tp, "ep": int(args.get("ep-size", 1)),
        "pp": int(args.get("pp-size", 1)), "dcp_size": int(args.get("dcp-size", 1) or 1),
        "pcp_size": int(args.get("pcp-size", 1) or 1), "dp_attention": dp_attention_size(args) > 1,
        "kv_offloading": "dram" if hicache else "none", "kv_offload_backend": backend,
        "allocated_cpu_dram_gb": dram_gb,
    }
    dep = plan.deployment
    multinode = dep is not None and is_multinode(dep)
    if multinode:
        identity["num_gpus"] = plan.resources.num_gpus
    texts = [log.read_text(errors="replace")[: 64 * 1024 * 1024] if log.exists() else None for log in logs]
    row = inferencex_row.build_row(identity=identity, raw_records=raw_records, summary=summary,
                                   server_log=texts, counters=counters,
                                   # InferenceX validates power on single-node rows only
                                   power=None if multinode else result.get("power_inferencex") or {"valid": False},
                                   server_metrics_export=server_metrics_export)
    if dep is None:
        return row
    if multinode:
        return multinode_row(row, dep, str(version) if version else None, router)
    return {**row, "router": router} if router else row


def affinity(dep: DeploymentPlan, log_dir: Path, raw_records: list[dict[str, Any]],
             row: dict[str, Any]) -> dict[str, Any]:
    """Session stickiness per role (`harness.point.record.stickiness`, over this point's sessions: AIPerf's correlation
    ids) beside the prefix-cache hit rate the row reports."""
    keys = {str(r["metadata"]["x_correlation_id"]) for r in raw_records
            if isinstance(r.get("metadata"), dict) and r["metadata"].get("x_correlation_id")}
    out: dict[str, Any] = {}
    for role in dep.roles:
        labels = [member_label(role.role, w.index, 0) for w in role.worker_plans]   # each worker's leader
        logs = {label: log_dir / member_log_name(label) for label in labels}
        out[role.role] = stickiness(logs, keys)
    cache = ((row.get("server_metrics") or {}).get("cache") or {})
    out["prefix_cache_hit_rate"] = cache.get("gpu_cache_hit_rate")
    return out


def server_args(plan: PointPlan) -> dict[str, Any]:
    """The SGLang args a point's identity comes from: the point's, or its one worker's in a one-node deployment
    (a router in front of one server)."""
    dep = plan.deployment
    if dep is not None and not is_multinode(dep):
        return dict(dep.roles[0].args)
    return dict(plan.settings["args"])


def deployment_fields(dep: DeploymentPlan, run: dict[str, Any] | None) -> dict[str, Any]:
    """Our record of a deployment's point: InferenceX's multi-node fields when it spans nodes (DP attention as a
    boolean, as our single-node records have it), and `deployment`: its shape, nodes, router and, when the sweep
    reused it, which deployment the point ran on."""
    shape = multinode_fields(dep)
    fields = dict(shape) if is_multinode(dep) else {}
    if fields:
        fields["dp_attention"] = fields["dp_attention"] == "true"
    fields["deployment"] = {"shape": deployment_shape(shape), "layout": dep.layout, "nodes": dep.nodes,
                            "num_gpus": dep.num_gpus,
                            "router": {"kind": dep.router.kind, "policy": dep.router.policy},
                            "run": run or {"reused": False}}
    return fields


def _expected_accept_length(plan: PointPlan, target: float | None, output_lengths: list[int]) -> float | None:
    """What the counters should show at the golden AL for these output lengths (see harness.point.record.accept_length)."""
    if target is None:
        return None

    args = {f"--{k}": v for k, v in plan.settings["args"].items()}
    try:
        max_len = draft_length(str(args.get("--speculative-algorithm")), args) + 1
    except UserError:
        return None
    method = plan.server.env.get("SGLANG_SIMULATE_ACC_METHOD", "match-expected")
    value = expected_measured(output_lengths, target, method, max_len)
    return None if value is None else round(value, 4)


def _target_accept_length(plan: PointPlan) -> float | None:
    value = plan.server.env.get("SGLANG_SIMULATE_ACC_LEN")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _server_env(pdir: Path) -> dict[str, Any] | None:
    """The server's effective environment against what the harness set (`harness.point.servers.server_env`), as
    read at readiness; None when the server never became ready."""

    path = pdir / SERVER_ENV_FILE
    if not path.exists():
        return None
    record = read_json(path)
    record.pop("schema_version", None)
    return record


def _fingerprint_summary(path: Path) -> dict[str, Any] | None:
    """What reports show of a worker's fingerprint (srt-slurm's keys plus the harness's extras)."""
    if not path.exists():
        return None
    fp = read_json(path)

    def obj(value: Any) -> dict[str, Any]:
        return value if isinstance(value, dict) else {}

    gpu, capture, image = obj(fp.get("gpu")), obj(fp.get("capture")), obj(fp.get("image"))
    info = obj(obj(fp.get("server")).get("server_info"))
    listed = gpu.get("gpus")
    gpus: list[Any] = listed if isinstance(listed, list) else []
    return {"path": path.name, "host": fp.get("hostname"), "arch": fp.get("arch"),
            "gpus": [g.get("name") for g in gpus if isinstance(g, dict)],
            "gpu_reason": None if gpu.get("available") else (capture.get("gpu_reason") or capture.get("error")),
            "driver": gpu.get("driver"), "python_version": fp.get("python_version"),
            "sglang_version": obj(fp.get("frameworks")).get("sglang"),
            "server_version": info.get("version"), "image": image.get("reference"),
            "image_digest": image.get("digest")}


def read_node_telemetry(csvs: list[Path]) -> tuple[list[Any], list[Any], dict[str, Any] | None]:
    """Several nodes' power CSVs read as one set of GPUs (each by its UUID): their samples and problems together;
    the first sampler status that says NVML was unavailable, else the first."""

    samples: list[Any] = []
    problems: list[Any] = []
    statuses: list[dict[str, Any]] = []
    for csv in csvs:
        node_samples, node_problems, status = read_telemetry(csv)
        samples += node_samples
        problems += node_problems
        if status is not None:
            statuses.append(status)
    down = [s for s in statuses if s.get("nvml_available") is False]
    chosen = down or statuses
    return samples, problems, chosen[0] if chosen else None


def _power_fields(pdir: Path, metrics: dict[str, Any], accounting: dict[str, Any],
                 expected_gpus: int | None, client_duration_s: float | None,
                 summary: dict[str, Any] | None) -> dict[str, Any]:
    """Power over our window (first → last successful request), or `power_valid: false` with the reasons;
    beside it `power_inferencex` (InferenceX's window and method, what the row publishes) and
    `gpu_telemetry` (temperature, utilisation and clocks over our window)."""

    tput = metrics.get("throughput")
    csvs = [c for c in power_csvs(pdir) if c.exists()]
    if tput is None or not csvs:
        reason = "window_invalid" if tput is None else "telemetry_file_missing"
        return {"power_valid": False, "power_invalid_reasons": [reason], "power_window": OUR_POWER_WINDOW,
                "power_inferencex": None, "gpu_telemetry": None}
    reference = None if client_duration_s is None else int(client_duration_s * 1e9)
    samples, problems, status = read_node_telemetry(csvs)  # read once: our window, InferenceX's, the telemetry
    report = integrate_samples(samples, tput["window_start_ns"], tput["window_end_ns"], expected_gpus,
                               reference_duration_ns=reference, prior_reasons=problems, sampler_status=status)
    write_json(pdir / "power_validation.json", report.validation_json())
    tokens = tput["tokens"]
    fields = report.result_fields(tokens["output"], tokens["input"] + tokens["output"], accounting["successful"])
    fields["power_window"] = OUR_POWER_WINDOW
    if len(csvs) > 1 or csvs[0].name != "power.csv":
        fields["power_files"] = [c.name for c in csvs]   # a deployment's nodes, one sampler each
    window_ns = aiperf_window_ns(summary)
    window = benchmark_window(window_ns, accounting["successful"], int(tokens["input"]), int(tokens["output"]))
    audit = power_validation(samples, window, expected_gpus, inferencex_reasons(p.code for p in problems),
                             precision=None)
    fields["power_inferencex"] = inferencex_block(audit, window_ns, problems)
    write_evidence(pdir, samples, status, at_audit_precision(audit))
    fields["gpu_telemetry"] = telemetry_summary(samples, tput["window_start_ns"], tput["window_end_ns"])
    return fields

"""Finding and reading result files: this harness's `point_result.json` and InferenceX-style aggregates.

A directory is searched recursively. A point directory of this harness holds our own record,
`point_result.json`, and the published InferenceX row beside it (`bmk_agentic_*.json`): the record is read
and the row beside it is skipped. Files named `bmk_agentic_*.json` without a record beside them are
InferenceX rows (ours exported with `harness export --inferencex`, read with the verdict the export keeps for
each, `harness.report.results.verdicts`, or InferenceX's own); any other `*.json`
(except the known companion artifacts such as AIPerf exports and fingerprints) is read when it is small
and is kept if it looks like an agentic aggregate: an object with `conc` and `request_metrics`, or a list
holding such objects (InferenceX's concatenated `agg_*.json`; its fixed-sequence rows are skipped and
counted in a note). Both InferenceX row forms are read: single-node rows (one `tp`/`ep`) and multinode
rows with `prefill_*`/`decode_*` fields, whose shape becomes part of the point's arm (`harness.report.results.arms`).
Each point carries the InferenceX series it belongs to (`harness.report.results.series`).

Metrics are read leniently (a point whose server never answered has none: it is shown, marked and kept
off the frontier); identity is read strictly (a result without an integer `conc` is an error).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.inputs.json_input import MAX_BYTES, finite_number, read_json_value
from harness.point.record.engine_label import engine_label
from harness.report.results.arms import Arm, arm_of
from harness.report.results.series import Series, model_name, series_of
from harness.report.results.verdicts import row_verdict

RESULT_PREFIX = "bmk_agentic_"
ATTEMPTS_DIR = "attempts"        # harness.point.state.attempt: a point's earlier attempts, never read as results
_POINT_FILES = {"status.json", ".writer.lock"}   # what marks a point directory (its status, its writer's lock)
RECORD_FILE = "point_result.json"
# Companion artifacts that are never results; skipped without being opened.
_NOT_RESULTS = re.compile(
    r"^(profile_export.*|fingerprint_.*|server_metrics_export.*|inputs|\.aiperf_results_ready|report"
    r"|plan|status|power_.*|agentic_power_.*|gpu_metrics.*|harness_verdicts)\.json$"
)
_MAX_CANDIDATE_BYTES = 8 * 1024 * 1024
LATENCY_METRICS = ("ttft", "e2el", "itl", "tpot", "intvty", "e2e_norm_intvty")


@dataclass(frozen=True)
class Reason:
    """Why a point is invalid: a stable code and a human message."""

    code: str
    message: str


@dataclass(frozen=True)
class PointResult:
    """One measured concurrency point, flattened from a result file."""

    source: Path
    conc: int
    curve_key: str  # the config key, or a key derived from identity for plain aggregates
    config_key: str | None
    image: str
    engine: str
    simulated: bool
    model: str
    framework: str
    precision: str
    spec_decoding: str
    hw: str
    engine_label: str | None   # "real SGLang, plain-torch CPU path" (harness.point.record.engine_label), else None
    tp: int | None
    ep: int | None
    pp: int | None
    num_gpus: int | None
    kv_offloading: str
    recipe_fingerprint: str | None
    total_tput_per_gpu: float | None
    output_tput_per_gpu: float | None
    input_tput_per_gpu: float | None
    latency: Mapping[str, Mapping[str, float]]  # metric -> stat -> seconds (tok/s/user for intvty)
    num_requests_total: int | None
    num_requests_successful: int | None
    errors: int | None
    cancelled_at_cutoff: int | None
    valid: bool
    invalid_reasons: tuple[Reason, ...]
    power_valid: bool | None
    power_invalid_reasons: tuple[str, ...]
    fingerprint: Mapping[str, Any] = field(default_factory=dict)
    variant: str | None = None          # None: the recipe as written; else a tuned variant's name
    overrides: tuple[str, ...] = ()     # the --set changes of a variant
    tag: str | None = None
    note: str | None = None
    harness_commit: str | None = None
    arm: Arm = field(default_factory=Arm)
    publishable: bool | None = None     # AIPerf's submission check and our validity (None: a record without one)
    publish_label: str | None = None    # `publishable`, `unofficial (AIPerf: unsafe_override)`, ...
    state: str = "completed"            # our record's state: completed | failed | cancelled (| running: no record yet)
    achieved_sessions: float | None = None   # our record's achieved concurrency (live session trees), if any
    window_seconds: float | None = None      # the throughput window (first profiled start -> last ok end)
    series: Series | None = None        # the InferenceX-app series (None: no record names it)
    slo_attainment: Mapping[str, Any] | None = None   # the record's (or the report's --slo) `slo_attainment` block
    cost: Mapping[str, Any] | None = None             # the record's (or the report's price) `cost` block
    power_w: float | None = None        # average total GPU power over the window, when power is valid

    @property
    def config_arm(self) -> Arm:
        """The arm that keeps configs apart: the whole arm for InferenceX rows; for our own records (which
        have a config key and may carry per-point overrides) the arm without the per-point fingerprint."""
        return self.arm if self.config_key is None else self.arm.without_fingerprint()

    def stat(self, metric: str, stat: str) -> float | None:
        """A latency statistic (`stat("e2el", "p90")`), or None when it was not measured."""
        return self.latency.get(metric, {}).get(stat)

    @property
    def point_dir(self) -> Path:
        return self.source.parent

    @property
    def recorded(self) -> bool:
        """False for a point read from its `status.json` alone (no record: nothing was measured)."""
        return self.source.name != "status.json"


def find_result_files(paths: Iterable[Path]) -> list[Path]:
    """Every candidate result file under `paths` (files are taken as given), sorted, without repeats."""
    found: set[Path] = set()
    for root in paths:
        root = Path(root)
        if root.is_file():
            found.add(_absolute(root))
            continue
        if not root.is_dir():
            if root.is_symlink():
                raise UserError(f"{root}: a symlink that leads to no file or directory (a loop or a dangling link)")
            raise UserError(f"{root}: no such file or directory (expected a run directory or a result file)")
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                                 and not (d == ATTEMPTS_DIR and _POINT_FILES & set(filenames)))  # earlier attempts
            for name in filenames:
                if not name.endswith(".json") or _NOT_RESULTS.match(name):
                    continue
                if name.startswith(RESULT_PREFIX) and RECORD_FILE in filenames:
                    continue  # the published row of a point whose own record is read
                found.add(_absolute(Path(dirpath) / name))
    return sorted(found)


def _absolute(path: Path) -> Path:
    """`path` with its symlinks resolved where they resolve (a looping link stays as written, and is refused
    when read)."""
    return Path(os.path.realpath(path))


def read_candidate(path: Path) -> tuple[list[PointResult], str | None]:
    named = path.name.startswith(RESULT_PREFIX) or path.name == RECORD_FILE
    try:
        data = read_json_value(path, "result", MAX_BYTES if named else _MAX_CANDIDATE_BYTES)
    except UserError:
        if named:
            raise
        return [], None  # another tool's JSON (or not JSON at all): not a result, not an error
    if isinstance(data, dict) and _looks_like_result(data):
        if path.name.startswith(RESULT_PREFIX):
            data = {**data, **row_verdict(path)}   # an exported row's verdict (harness.report.results.verdicts)
        return [parse_result(data, path)], None
    if isinstance(data, list):
        agentic = [r for r in data if isinstance(r, dict) and _looks_like_result(r)]
        if agentic:
            skipped = len(data) - len(agentic)
            note = (f"{path}: read {len(agentic)} agentic row(s), skipped {skipped} other row(s) "
                    "(fixed-sequence or not a result)") if skipped else None
            return [parse_result(r, path) for r in agentic], note
    if named:
        raise UserError(f"{path}: <root>: expected an agentic result with `conc` and `request_metrics`")
    return [], None


def _looks_like_result(d: Mapping[str, Any]) -> bool:
    """An agentic result: `conc` with `request_metrics`, or a row that names the agentic scenario."""
    return "conc" in d and ("request_metrics" in d or d.get("scenario_type") == "agentic-coding")


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and abs(value) < 2 ** 63:
        return int(value)
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value) <= 30:
        return int(value)
    return None


def _map(value: Any) -> Mapping[str, Any]:
    """`value` when it is a JSON object, else an empty one (a wrong-typed section reads as absent)."""
    return value if isinstance(value, Mapping) else {}


def _strs(value: Any) -> tuple[str, ...]:
    """The strings of a JSON list (anything else reads as none)."""
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _dig(d: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(d, Mapping):
            return None
        d = d.get(key)
    return d


def derived_curve_key(d: Mapping[str, Any]) -> str:
    """A curve key for aggregates without a config key: model, precision, hardware, framework, parallelism."""
    parts = [model_name(d) or "unknown-model", str(d.get("precision") or "")]
    if d.get("hw"):
        parts.append(str(d["hw"]).replace("cluster:", ""))
    parts.append(str(d.get("framework") or ""))
    par = f"tp{d.get('tp', '?')}-ep{d.get('ep', '?')}"
    if _int(d.get("pp")) not in (None, 1):
        par += f"-pp{d.get('pp')}"
    parts.append(par)
    return "-".join(p for p in parts if p)


def parse_result(d: Mapping[str, Any], source: Path) -> PointResult:
    """Flatten one result object (this harness's or a plain InferenceX aggregate) into a PointResult."""
    conc = _int(d.get("conc"))
    if conc is None or conc < 1:
        raise UserError(f"{source}: conc: expected a positive integer, got {d.get('conc')!r}")
    metrics = _map(d.get("request_metrics"))
    per_gpu = _map(_dig(metrics, "throughput", "per_gpu"))
    latency: dict[str, dict[str, float]] = {}
    for name in LATENCY_METRICS:
        stats = _dig(metrics, "latency", name)
        if isinstance(stats, Mapping):
            clean = {k: v for k, v in ((k, finite_number(v)) for k, v in stats.items()) if v is not None}
            if clean:
                latency[name] = clean
    accounting = _map(d.get("request_accounting"))
    total = _int(d.get("num_requests_total"))
    ok = _int(d.get("num_requests_successful"))
    errors = _int(accounting.get("errors"))
    if errors is None:
        errors = _int(accounting.get("records_error_dropped"))
    if errors is None and total is not None and ok is not None:
        errors = total - ok
    valid, reasons = _validity(d, ok)
    publish = _publish(d)
    simulated = bool(d.get("simulated")) or d.get("engine") == "sim" or d.get("hw") == "sim"
    power_valid = d.get("power_valid")
    config_key = d.get("config_key") if isinstance(d.get("config_key"), str) else None
    hw = "sim" if simulated else str(d.get("hw") or "")   # an older simulated record may name the recipe's GPU
    return PointResult(
        source=source,
        conc=conc,
        curve_key=config_key or derived_curve_key(d),
        config_key=config_key,
        image=str(d.get("image") or ""),
        engine=str(d.get("engine") or ("sim" if simulated else "real")),
        simulated=simulated,
        model=str(d.get("model") or ""),
        framework=str(d.get("framework") or ""),
        precision=str(d.get("precision") or ""),
        spec_decoding=str(d.get("spec_decoding") or ""),
        hw=hw,
        engine_label=engine_label(str(d.get("engine") or ""), str(d.get("hw") or "")),
        tp=_int(d.get("tp")),
        ep=_int(d.get("ep")),
        pp=_int(d.get("pp")),
        num_gpus=_int(d.get("num_gpus")),
        kv_offloading=str(d.get("kv_offloading") or ""),
        recipe_fingerprint=d.get("recipe_fingerprint") if isinstance(d.get("recipe_fingerprint"), str) else None,
        total_tput_per_gpu=finite_number(per_gpu.get("total_tput_tps")),
        output_tput_per_gpu=finite_number(per_gpu.get("output_tput_tps")),
        input_tput_per_gpu=finite_number(per_gpu.get("input_tput_tps")),
        latency=latency,
        num_requests_total=total,
        num_requests_successful=ok,
        errors=errors,
        cancelled_at_cutoff=_int(accounting.get("cancelled_at_cutoff")),
        valid=valid,
        invalid_reasons=reasons,
        power_valid=None if power_valid is None else bool(power_valid),
        power_invalid_reasons=_strs(d.get("power_invalid_reasons")),
        fingerprint=_fingerprint_fields(d.get("fingerprint")),
        variant=_str(d.get("variant")),
        overrides=_strs(d.get("overrides")),
        tag=_str(d.get("tag")),
        note=_str(d.get("note")),
        harness_commit=_commit(d.get("harness_commit")),
        arm=arm_of(d),
        publishable=None if publish is None else bool(publish.get("publishable")),
        publish_label=None if publish is None else str(publish.get("label") or ""),
        state=d["state"] if d.get("state") in ("completed", "failed", "cancelled") else "completed",
        achieved_sessions=finite_number(_dig(d, "achieved_concurrency", "sessions")),
        window_seconds=finite_number(_dig(metrics, "throughput", "duration_seconds")),
        series=series_of(d, hw),
        slo_attainment=_map(d.get("slo_attainment")) or None,
        cost=_map(d.get("cost")) or None,
        power_w=finite_number(d.get("avg_total_gpu_power_w")) if power_valid is True else None,
    )


def _publish(d: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Our record's publishability (`harness.point.record.publishable`), when it has one."""
    found = d.get("publishable")
    return found if isinstance(found, Mapping) and isinstance(found.get("publishable"), bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _commit(value: Any) -> str | None:
    """`harness_commit` of our record: `{"commit", "dirty"}` → `abc123…` (`+dirty` when the tree was)."""
    if not isinstance(value, Mapping) or not isinstance(value.get("commit"), str):
        return None
    return str(value["commit"]) + ("+dirty" if value.get("dirty") else "")


def _validity(d: Mapping[str, Any], ok: int | None) -> tuple[bool, tuple[Reason, ...]]:
    validity = d.get("validity")
    reasons: list[Reason] = []
    if isinstance(validity, Mapping):
        listed = validity.get("reasons")
        for r in listed if isinstance(listed, list) else ():
            if isinstance(r, Mapping):
                reasons.append(Reason(str(r.get("code", "unknown")), str(r.get("message", ""))))
            else:
                reasons.append(Reason(str(r), ""))
        valid = bool(validity.get("valid", not reasons))
    else:
        valid = True
    if ok == 0 and valid:
        valid = False
        reasons.append(Reason("no_successful_requests", "no request completed successfully"))
    return valid, tuple(reasons)


def _fingerprint_fields(fp: Any) -> dict[str, Any]:
    if not isinstance(fp, Mapping):
        return {}
    out: dict[str, Any] = {}
    for key in ("host", "arch", "sglang_version", "server_version", "image", "image_digest", "driver", "path"):
        if fp.get(key) not in (None, ""):
            out[key] = fp[key]
    if "sglang_version" not in out and "server_version" in out:
        out["sglang_version"] = out["server_version"]
    gpus = fp.get("gpus")
    if isinstance(gpus, list) and gpus:
        names = [str(g.get("name", "?")) if isinstance(g, Mapping) else str(g) for g in gpus]
        summary = {n: names.count(n) for n in dict.fromkeys(names)}
        out["gpus"] = ", ".join(f"{c}x {n}" for n, c in summary.items())
    elif fp.get("gpu_reason"):
        out["gpus"] = f"none ({fp['gpu_reason']})"
    return out

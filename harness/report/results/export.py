"""A run laid out as InferenceX's artifacts, so InferenceX's collectors and InferenceX-app's ingest read it whole.

For every point directory holding `point_result.json` and its published row, under OUT, with `<name>` the
point's artifact name (`<config_key>_conc<N>`, or `<config_key>_<variant>_conc<N>` for a variant or tag, so
a variant never replaces the recipe's own point):

- `bmk_agentic_<name>/bmk_agentic_<name>.json`: the published AgentX row, its floats rounded as InferenceX
  rounds them (5 places);
- `agentic_<name>/aiperf_artifacts/…`: AIPerf's files (without `inputs.json` and `profile_export_raw.jsonl`,
  which InferenceX does not upload either);
- `server_logs_<name>/server.log` (a deployment: every worker node's log named as srt-slurm names it,
  `node<K>_<role>_w<N>.out` with role `prefill`, `decode` or `agg`, which is how InferenceX-app's AgentX ingest
  tells workers and roles apart, and `router.log`);
- with measured power, InferenceX's power evidence (`harness.power.inferencex_evidence`): `gpu_metrics_<name>/`
  (`gpu_metrics.csv` in UTC, `gpu_metrics_context.json` saying so, `gpu_metrics_identity.{json,csv}`,
  `gpu_metrics_energy_{start,end}.csv`), `power_audit_<name>/power_validation_<name>.json` (InferenceX's audit
  document over AIPerf's window) and the host's UTC offset as `agentic_<name>/agentic_power_timezone_offset.txt`;
- `inspect_<name>/inspect.html` and `inspect.json`: the point seen from inside (`harness inspect`), its page and
  the JSON twin holding every series, each request's timeline fields and the stability diagnostics;

and for every eval directory with lm-eval's results, `eval_<config_key>_conc<N>/`: `meta_env.json`, lm-eval's
`results_*.json` and `samples_*.jsonl` (what InferenceX's `collect_eval_results.py` and the app's eval ingest
read) and our `eval_row_*.json` (InferenceX's `EvalRow`).

Only regular files inside RUN_DIR are read: a record naming a row elsewhere (`"row": "/etc/passwd"`), a
symlink leading out of the tree, a corrupt or foreign row, or two points that would export under one name
are refused with one line before anything is written. Earlier attempts (`attempts/`) are not exported.

Only publishable points are exported (`harness.point.record.publishable`: AIPerf's check and our validity verdict);
`include_unofficial` exports the others too (smoke runs, simulated points, invalid points). Every record is checked
either way. Every exported row's verdict (state, validity, publishability) goes into `harness_verdicts.json` at OUT's
root (`harness.report.results.verdicts`), where `harness report` and `harness check --results` read it: a point
counts the same in the run and in its export, and an invalid one exported is named in the summary.
A point that did not complete (its record's or its `status.json`'s state is failed or cancelled) is never
exported as a row, with or without `include_unofficial`: it is listed as failed with its reason, and a run
whose points all failed is refused as such ("all N points failed: ...").

OUT must be new or an empty directory, and not a symlink: an earlier export is never mixed with this one (the
counts printed are of everything in OUT), and no file is written through a symlink. The export is built in a
temporary directory beside OUT and renamed to OUT when complete: a write that fails (a full disk, a read-only or
forbidden directory) is one line naming the path and the cause, and leaves neither OUT nor anything half-written.
Before the rename every file built is scanned for a secret's shape (`harness.report.results.export_scan`): one
left (a token in a file copied as the run wrote it, AIPerf's, a server's log, lm-eval's) refuses the export in one
line naming the file and the JSON path or line, and nothing is exported.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.artifacts import staged_dir, write_foreign_json, write_json, write_text
from harness.errors import UserError
from harness.inputs.json_input import read_json_object
from harness.inspect.write import inspect_points
from harness.point.record.inferencex_row import rounded_row
from harness.point.record.publishable import of
from harness.point.servers.server_logs import server_logs
from harness.point.state.truth import read_point_status, read_record, reconcile
from harness.power import inferencex_evidence as ev
from harness.power.gpu_metrics import CSV_NAME, OFFSET_NAME, utc_csv
from harness.report.results.export_scan import refuse_shapes_left
from harness.report.results.verdicts import VERDICTS_FILE, invalid_words, verdict_of, verdicts_document

RECORD_FILE = "point_result.json"
EVAL_RESULT_FILE = "eval_result.json"
SKIPPED_AIPERF = {"inputs.json", "profile_export_raw.jsonl"}
ATTEMPTS_DIR = "attempts"   # harness.point.state.attempt
_ROW_NAME = re.compile(r"^bmk_agentic_[A-Za-z0-9._,=+-]+\.json$")
_NAME_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._,=+-]*$")


@dataclass
class ExportPlan:
    """What an export writes: destination -> how (copy a source file, or write a text/JSON body)."""

    root: Path
    files: dict[Path, Callable[[Path], None]] = field(default_factory=dict)
    sources: dict[Path, Path] = field(default_factory=dict)   # destination -> the run's file it comes from
    rows: int = 0
    evals: int = 0
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)   # row path inside OUT -> its verdict
    invalid: dict[Path, str] = field(default_factory=dict)   # point directory exported with an invalid verdict -> why

    def add(self, dst: Path, write: Callable[[Path], None], source: Path) -> None:
        if dst in self.files:
            raise UserError(f"{source} and {self.sources[dst]} would both export as {dst.relative_to(self.root)}; "
                            "export them separately")
        self.files[dst] = write
        self.sources[dst] = source


def _inside(path: Path, root: Path) -> bool:
    """`path` is a regular file whose real location lies inside `root` (no symlink leads out)."""
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    return real.is_file() and real.is_relative_to(root)


def _read_object(path: Path, what: str) -> dict[str, Any]:
    return read_json_object(path, what)   # the bounded reader every result reader goes through


_MEMBER_LOG = re.compile(r"^server_(?P<role>prefill|decode|aggregated)_w(?P<worker>\d+)(?:_n(?P<node>\d+))?\.log$")


def exported_log_name(name: str) -> str:
    """A deployment member's log as srt-slurm names it (`server_prefill_w0_n1.log` -> `node1_prefill_w0.out`); the
    single server's `server.log` and the router's `router.log` keep their names."""
    m = _MEMBER_LOG.match(name)
    if m is None:
        return name
    role = "agg" if m.group("role") == "aggregated" else m.group("role")
    return f"node{m.group('node') or 0}_{role}_w{m.group('worker')}.out"


def _copy_from(src: Path) -> Callable[[Path], None]:
    def write(dst: Path) -> None:
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)   # the run's own file as written (redacted when it was written)
    return write


def _copy_redacted(src: Path) -> Callable[[Path], None]:
    """A log another tool wrote (AIPerf's `logs/*.log`), its secrets masked as the harness's own text is: a log is
    read by people, never parsed, and AIPerf logs its settings (a cache's `key=...` reads as a secret's shape)."""
    def write(dst: Path) -> None:
        write_text(dst, src.read_text(errors="replace"))
    return write


def _walk(root: Path, name: str) -> Iterator[Path]:
    """Directories below `root` holding `name` (not in hidden directories or earlier attempts, no symlinked
    directories followed)."""
    for dirpath, dirnames, filenames in os.walk(root):
        point_dir = bool({"status.json", ".writer.lock"} & set(filenames))
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not (d == ATTEMPTS_DIR and point_dir))
        if name in filenames:
            yield Path(dirpath)


def artifact_name(record: dict[str, Any], source: Path) -> str:
    """`<config_key>_conc<N>`, with the variant (or tag) between them for a variant's point."""
    key, conc, variant = record.get("config_key"), record.get("conc"), record.get("variant")
    if not isinstance(key, str) or not _NAME_PART.match(key) or isinstance(conc, bool) or not isinstance(conc, int):
        raise UserError(f"{source}: not a point record of this harness (expected config_key and an integer conc)")
    if variant is None or variant == "":
        return f"{key}_conc{conc}"
    if not isinstance(variant, str) or not _NAME_PART.match(variant):
        raise UserError(f"{source}: variant {variant!r}: expected a name of letters, digits and ._,=+-")
    return f"{key}_{variant}_conc{conc}"


def check_row(row: dict[str, Any], path: Path) -> None:
    """An AgentX row of ours: the agentic scenario, an integer conc, request metrics and accounting."""
    conc = row.get("conc")
    if row.get("scenario_type") != "agentic-coding" or isinstance(conc, bool) or not isinstance(conc, int) \
            or not isinstance(row.get("request_metrics"), dict) or not isinstance(row.get("hw"), str):
        raise UserError(f"{path}: not an AgentX row (expected scenario_type agentic-coding, an integer conc, hw "
                        "and request_metrics)")


def point_failure(record: dict[str, Any]) -> str | None:
    """`<state>: <reason>` for a point that did not complete, None for a completed one (a record without a
    state, written before states were recorded, counts as completed)."""
    state = record.get("state", "completed")
    if state == "completed":
        return None
    reason = record.get("state_reason") or record.get("reason")
    return f"{state}: {reason}" if isinstance(reason, str) and reason else str(state)


def plan_point(pdir: Path, root: Path, out: Path, plan: ExportPlan, include_unofficial: bool = True) -> bool:
    """Check the point's record and row, and add its files to the plan when it is exported; whether it is.
    A point that did not complete is never exported (`point_failure`)."""

    record_path = pdir / RECORD_FILE
    if not _inside(record_path, root):
        raise UserError(f"{record_path}: not a regular file inside {root}")
    record = _read_object(record_path, "point record")
    if point_failure(record) is not None:
        artifact_name(record, record_path)   # still a record of ours
        return False
    row_name = record.get("row")
    if not isinstance(row_name, str) or not _ROW_NAME.match(row_name):
        raise UserError(f"{record_path}: row {row_name!r}: expected the name of the row file beside the record "
                        "(bmk_agentic_*.json)")
    row_path = pdir / row_name
    if not _inside(row_path, root):
        raise UserError(f"{record_path}: no published row {row_name} beside it inside {root}")
    row = _read_object(row_path, "published AgentX row")
    check_row(row, row_path)
    name = artifact_name(record, record_path)
    if not include_unofficial and not of(record)["publishable"]:
        return False
    body = rounded_row(row)
    row_dst = out / f"bmk_agentic_{name}" / f"bmk_agentic_{name}.json"
    plan.add(row_dst, lambda dst: _write_row(dst, body), row_path)
    plan.rows += 1
    verdict = verdict_of(record)
    plan.verdicts[row_dst.relative_to(out).as_posix()] = verdict
    why = invalid_words(verdict)
    if why is not None:
        plan.invalid[pdir] = why
    aiperf = pdir / "aiperf"
    if aiperf.is_dir() and not aiperf.is_symlink():
        for dirpath, dirnames, filenames in os.walk(aiperf):
            dirnames.sort()
            for f in sorted(filenames):
                src = Path(dirpath) / f
                if f in SKIPPED_AIPERF or src.is_symlink() or not _inside(src, root):
                    continue
                copy = _copy_redacted(src) if src.suffix == ".log" else _copy_from(src)
                plan.add(out / f"agentic_{name}" / "aiperf_artifacts" / src.relative_to(aiperf), copy, src)
    for log in server_logs(pdir):   # a deployment: every worker node's and the router's
        if log.exists() and _inside(log, root) and not log.is_symlink():
            plan.add(out / f"server_logs_{name}" / exported_log_name(log.name), _copy_from(log), log)
    _plan_power_evidence(pdir, root, out, name, plan)
    page = out / f"inspect_{name}" / "inspect.html"
    plan.add(page, _inspect_page(pdir), record_path)
    plan.add(page.with_suffix(".json"), lambda dst: None, record_path)   # written with the page
    return True


def _inspect_page(pdir: Path) -> Callable[[Path], None]:
    """The point's inspect page and its JSON twin (`harness.inspect`), written at `dst` and beside it."""
    def write(dst: Path) -> None:
        inspect_points(pdir, out=dst)
    return write


def _plan_power_evidence(pdir: Path, root: Path, out: Path, name: str, plan: ExportPlan) -> None:
    """InferenceX's power evidence of a point with samples (`harness.power.inferencex_evidence`): `gpu_metrics_<name>/`
    (the CSV in UTC with its context file, the GPUs' identity, the energy snapshots), `power_audit_<name>/
    power_validation_<name>.json`, and the host's UTC offset beside AIPerf's files in `agentic_<name>/`, where
    InferenceX reads it to place AIPerf's naive local window."""

    def present(path: Path) -> bool:
        return _inside(path, root) and not path.is_symlink()

    csv, offset, context = pdir / CSV_NAME, pdir / OFFSET_NAME, pdir / ev.CONTEXT_NAME
    if present(offset):
        plan.add(out / f"agentic_{name}" / OFFSET_NAME, _copy_from(offset), offset)
    if present(csv):
        if present(context):   # written in UTC already
            plan.add(out / f"gpu_metrics_{name}" / CSV_NAME, _copy_from(csv), csv)
        else:                  # recorded in local time before the context file existed
            text = utc_csv(csv.read_text(), offset.read_text() if present(offset) else None, csv)
            plan.add(out / f"gpu_metrics_{name}" / CSV_NAME, lambda dst: _write(dst, text), csv)
        plan.add(out / f"gpu_metrics_{name}" / ev.CONTEXT_NAME, lambda dst: _write_row(dst, dict(ev.CONTEXT)), csv)
        for sidecar in (ev.IDENTITY_JSON, ev.IDENTITY_CSV, ev.ENERGY_START, ev.ENERGY_END):
            if present(pdir / sidecar):
                plan.add(out / f"gpu_metrics_{name}" / sidecar, _copy_from(pdir / sidecar), pdir / sidecar)
    audit = pdir / ev.AUDIT_NAME
    if present(audit):
        plan.add(out / f"power_audit_{name}" / f"power_validation_{name}.json", _copy_from(audit), audit)


def plan_eval(edir: Path, root: Path, out: Path, plan: ExportPlan) -> None:
    """An eval with lm-eval's results file: `eval_<config_key>_conc<N>/` as InferenceX's eval artifact."""
    result_path = edir / EVAL_RESULT_FILE
    if not _inside(result_path, root):
        return
    result = _read_object(result_path, "eval result")
    results_rel = result.get("lm_eval_results")
    if not isinstance(results_rel, str) or not results_rel:
        return   # the eval wrote no results (failed): nothing InferenceX could read
    name = artifact_name(result, result_path)
    sources = [edir / "meta_env.json", edir / results_rel]
    samples_rel = result.get("lm_eval_samples")
    if isinstance(samples_rel, str) and samples_rel:
        sources.append(edir / samples_rel)
    row = result.get("row")
    if isinstance(row, str) and re.match(r"^eval_row_[A-Za-z0-9._-]+\.json$", row):
        sources.append(edir / row)
    for src in sources:
        if not _inside(src, root) or not src.resolve().is_relative_to(edir.resolve()):
            raise UserError(f"{result_path}: {src.name}: not a regular file inside {edir}")
    if not Path(results_rel).name.startswith("results_"):
        raise UserError(f"{result_path}: lm_eval_results {results_rel!r}: expected lm-eval's results_*.json")
    for src in sources:
        plan.add(out / f"eval_{name}" / src.name, _copy_from(src), src)
    plan.evals += 1


def _failed_points(run_dir: Path, root: Path, points: list[Path]) -> dict[Path, str]:
    """Point directory -> `<state>: <reason>` for every point that did not complete, as its status and record
    reconciled say (`harness.point.state.truth`: a record whose status says failed or cancelled, a record that says
    so itself, a record that cannot be read), or a `status.json` in a final state other than completed without a
    record (the point ended before its client)."""

    failed: dict[Path, str] = {}
    for pdir in points:
        if not _inside(pdir / RECORD_FILE, root):
            continue
        status = read_point_status(pdir) if _inside(pdir / "status.json", root) else None
        truth = reconcile(status, read_record(pdir))
        if not truth.is_result:
            failed[pdir] = f"{truth.state}: {truth.reason}" if truth.reason else truth.state
    for pdir in _walk(run_dir, "status.json"):
        status_path = pdir / "status.json"
        if pdir in points or not _inside(status_path, root):
            continue
        status = _read_object(status_path, "point status")
        if status.get("kind", "point") == "point" and status.get("state") in ("failed", "cancelled"):  # not an eval
            failed[pdir] = point_failure(status) or str(status.get("state"))
    return failed


def check_out(out: Path) -> None:
    """OUT is new, or an empty directory that is not a symlink (nothing mixes with an earlier export)."""
    if out.is_symlink():
        raise UserError(f"{out}: a symlink; export writes into a new or empty directory, never through a symlink")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError(f"{out}: exists and is not an empty directory (an earlier export?); remove it or "
                        "choose a new one")


def _prepare(out: Path, dst: Path) -> None:
    """Make `dst`'s directories one by one below OUT, refusing any of them, or `dst` itself, that is a symlink
    (export never writes through one)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out
    for part in dst.relative_to(out).parts:
        if path.is_symlink():
            raise UserError(f"{path}: a symlink; export never writes through a symlink")
        path.mkdir(exist_ok=True)
        path = path / part
    if path.is_symlink():
        raise UserError(f"{path}: a symlink; export never writes through a symlink")


def _write_row(dst: Path, row: dict[str, Any]) -> None:
    write_foreign_json(dst, row)


def _write_ours(dst: Path, body: dict[str, Any]) -> None:
    write_json(dst, body)


def _write(dst: Path, text: str) -> None:
    write_text(dst, text)


@dataclass(frozen=True)
class ExportSummary:
    rows: int
    evals: int
    files: list[Path]
    left_out: list[Path]        # point directories not exported: not publishable
    failed: dict[Path, str] = field(default_factory=dict)   # point directories that did not complete -> why
    invalid: dict[Path, str] = field(default_factory=dict)  # exported (unofficial) points that are not valid -> why


def export_inferencex(run_dir: Path, out: Path, include_unofficial: bool = False) -> ExportSummary:
    """Export every publishable point (every point with `include_unofficial`) and every eval found under
    `run_dir`; everything is checked before anything is written."""
    if not run_dir.is_dir():
        raise UserError(f"{run_dir}: no such directory (expected a run directory)")
    check_out(out)
    root = run_dir.resolve()
    plan = ExportPlan(root=out)
    points = list(_walk(run_dir, RECORD_FILE))
    failed = _failed_points(run_dir, root, points)
    if failed and len(failed) == len(set(points) | set(failed)):
        raise UserError(f"{run_dir}: all {len(failed)} points failed: "
                        + "; ".join(f"{p.relative_to(run_dir)} ({why})" for p, why in failed.items()))
    if not points:
        raise UserError(f"{run_dir}: no point directories found (expected {RECORD_FILE} below it)")
    left_out = [pdir for pdir in points if pdir not in failed
                and not plan_point(pdir, root, out, plan, include_unofficial)]
    for edir in _walk(run_dir, EVAL_RESULT_FILE):
        plan_eval(edir, root, out, plan)
    if plan.verdicts:
        document = verdicts_document(plan.verdicts)
        plan.add(out / VERDICTS_FILE, lambda dst: _write_ours(dst, document), run_dir)
    with staged_dir(out, "export") as tmp:   # renamed to OUT when complete; removed if anything fails
        for dst, write in plan.files.items():
            staged = tmp / dst.relative_to(out)
            _prepare(tmp, staged)
            write(staged)
        refuse_shapes_left(tmp)   # no secret's shape in anything put in place
    return ExportSummary(plan.rows, plan.evals, list(plan.files), left_out, failed, plan.invalid)

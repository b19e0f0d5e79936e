"""Property-based fuzzing of every result reader (report, compare, export, fingerprint diff, status and
follow's point views, check --results): whatever a run directory holds (corrupt or foreign JSON, wrong-typed
fields, deep nesting, symlink loops, FIFOs, devices, directories where files belong), each command ends in
its output or a one-line UserError (exit status 2), never another exception (bounded by examples, not by time: a busy machine must not fail it).

Examples per reader: `HARNESS_FUZZ_EXAMPLES` (default 60; `benchmarks/fuzz_readers.sh` runs 5,000 in all)."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.cli import _main
from harness.errors import UserError, one_line
from slurm.jobs import JOBS_FILE
from tests.unit.test_fuzz_loaders import mutated

ROOT = Path(__file__).resolve().parents[2]
POINT = ROOT / "tests" / "fixtures" / "h200-power"
RECIPE = ROOT / "recipes" / "quickstart-sim.yaml"
JOB = "4242"
FINGERPRINT = {"schema_version": 1, "engine": "sglang", "host": "node1",
               "gpu": {"count": 1, "name": "H200", "driver": "570.1"},
               "packages": {"sglang": "0.5.2", "torch": "2.8.0"}, "env": {"SGLANG_X": "1"},
               "server": {"server_info": {"version": "0.5.2"}}, "capture": {"ok": True}}
STATUS = {"schema_version": 1, "state": "completed", "phase": "done", "exit_status": 0, "valid": True,
          "started_ns": 1_700_000_000_000_000_000, "ended_ns": 1_700_000_100_000_000_000}
EVAL = {"schema_version": 1, "config_key": "quickstart-sim", "conc": 4, "task": "gsm8k", "state": "completed",
        "score": 0.81, "score_name": "exact_match,strict-match", "score_se": 0.01, "n_eff": 1319, "min_score": 0.5,
        "threshold_source": "thresholds.yaml", "passed": True, "simulated": True, "limit": None, "partial": False}

# The files a reader meets, relative to the run directory.
TARGETS = ("q/conc4/point_result.json", "q/conc4/bmk_agentic_quickstart-sim_conc4.json", "q/conc4/status.json",
           "q/conc4/fingerprint_agg_w0.json", "q/eval/eval_result.json", "q/eval/status.json", ".harness-jobs.json",
           "q/conc4/aiperf/profile_export.jsonl", "q/conc8/bmk_agentic_x_conc8.json", "q/agg_bmk.json")
assert JOBS_FILE == ".harness-jobs.json"

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10 ** 40), 10 ** 40) | st.floats() | st.text(max_size=12),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids, max_size=3),
    max_leaves=8)


def examples() -> int:
    return int(os.environ.get("HARNESS_FUZZ_EXAMPLES", "60"))


FUZZ = settings(max_examples=examples(), deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def build_run(run: Path) -> None:
    """A run directory as the harness leaves it: one point with its record, row, status, fingerprint and
    per-request file; an eval; the Slurm submission record."""
    pdir = run / "q" / "conc4"
    shutil.copytree(POINT, pdir, ignore=shutil.ignore_patterns("*.csv", "*.txt", "*.md"))
    (pdir / "status.json").write_text(json.dumps(STATUS))
    (pdir / "fingerprint_agg_w0.json").write_text(json.dumps(FINGERPRINT))
    (run / "q" / "eval").mkdir()
    (run / "q" / "eval" / "eval_result.json").write_text(json.dumps(EVAL))
    (run / "q" / "eval" / "status.json").write_text(json.dumps(STATUS))
    points = [{"task_id": 0, "conc": 4, "name": "conc4", "point_dir": str(pdir),
               "result": "bmk_agentic_quickstart-sim_conc4.json", "kind": "point"},
              {"task_id": 1, "conc": 4, "name": "eval", "point_dir": str(run / "q" / "eval"),
               "result": "eval_result.json", "kind": "eval"}]
    (run / JOBS_FILE).write_text(json.dumps(
        {"schema_version": 1, "jobs": [{"job_id": JOB, "out_dir": str(run), "points": points}]}))


def _set_path(value: Any, path: list[int], new: Any) -> Any:
    """`value` with the node reached by following `path` (indices into each container) replaced by `new`."""
    if not path or not isinstance(value, (dict, list)) or not value:
        return new
    keys = list(value) if isinstance(value, dict) else list(range(len(value)))
    key = keys[path[0] % len(keys)]
    value[key] = _set_path(value[key], path[1:], new)
    return value


@st.composite
def damage(draw: st.DrawFn) -> tuple[str, str, Any]:
    """(target file, kind of damage, its argument)."""
    target = draw(st.sampled_from(TARGETS))
    kind = draw(st.sampled_from(["bytes", "field", "field", "field", "deep", "loop", "fifo", "dev_zero", "dir",
                                 "empty", "huge_int", "dangling", "big_number", "surrogate", "typed_field"]))
    if kind == "bytes":
        return target, kind, draw(st.integers(0, 2 ** 32))
    if kind == "field":
        return target, kind, (draw(st.lists(st.integers(0, 50), max_size=4)), draw(JSON_VALUES))
    if kind in ("big_number", "surrogate"):   # a 400-digit integer, a lone `\ud800` escape, at any leaf
        return target, kind, draw(st.lists(st.integers(0, 50), max_size=4))
    if kind == "typed_field":   # a field a reader shows as text (`phase`, `state`, ...) of another JSON type
        return target, kind, (draw(st.sampled_from(["phase", "state", "reason", "kind", "config_key", "task"])),
                              draw(JSON_VALUES.filter(lambda v: not isinstance(v, str))))
    if kind == "deep":
        return target, kind, (draw(st.sampled_from(["[", "{\"a\":"])), draw(st.sampled_from([65, 2000, 200_000])))
    return target, kind, None


def apply(run: Path, target: str, kind: str, arg: Any, data: st.DataObject) -> None:
    path = run / target
    path.parent.mkdir(parents=True, exist_ok=True)
    seed = path.read_bytes() if path.is_file() else json.dumps({"conc": 8, "request_metrics": {}}).encode()
    if path.exists():
        path.unlink()
    if kind == "bytes":
        path.write_bytes(data.draw(mutated(seed)))
    elif kind == "field":
        try:
            value = json.loads(seed)
        except ValueError:
            value = {}
        path.write_text(json.dumps(_set_path(value, *arg)))
    elif kind in ("big_number", "surrogate", "typed_field"):
        try:
            value = json.loads(seed)
        except ValueError:
            value = {}
        marker = "\u0000MARK\u0000"
        if kind == "typed_field":
            value = {**value, arg[0]: arg[1]} if isinstance(value, dict) else {arg[0]: arg[1]}
        else:
            value = _set_path(value, arg, marker)
        text = json.dumps(value)
        path.write_text(text.replace(json.dumps(marker), "9" * 400 if kind == "big_number" else '"\\ud800"'))
    elif kind == "deep":
        opener, n = arg
        path.write_text(opener * n + "1" + ("]" if opener == "[" else "}") * (n if n < 100_000 else 0))
    elif kind == "loop":
        path.symlink_to(path.name)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")
    elif kind == "dir":
        path.mkdir()
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "huge_int":
        path.write_text('{"conc": ' + "9" * 5000 + ', "request_metrics": {}, "row": 1, "state": ' + "7" * 40 + "}")
    elif kind == "dangling":
        path.symlink_to(run / "nowhere")


def _runs(command: Callable[[Path, Path], Any], case: tuple[str, str, Any], data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run, base = Path(tmp) / "run", Path(tmp) / "base"
        build_run(run)
        build_run(base)
        apply(run, *case, data)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                command(run, Path(tmp))
        except UserError as exc:
            message = str(exc)
            assert message
            assert len(one_line(message)) <= 600


def cli(*argv: str) -> int:
    return _main(list(argv))


def report(run: Path, tmp: Path) -> None:
    """Everything `harness report` reads and renders, less the PNG drawing (matplotlib takes seconds and
    only ever sees the parsed floats)."""
    from harness.report.analysis.curves import group_curves
    from harness.report.analysis.report_json import report_json
    from harness.report.render.build import distributions
    from harness.report.render.csv_export import render_csv
    from harness.report.render.html import render_html
    from harness.report.render.markdown import render_markdown
    from harness.report.results.evals import eval_html, eval_json, eval_markdown, newest_evals
    from harness.report.results.points import load_results_noted

    points, _notes = load_results_noted([run])
    curves = group_curves(points)
    distributions(curves)
    evals = newest_evals([run])
    keys = {k: c.simulated for c in curves for k in c.config_keys}
    json.dumps({**report_json(curves), "evals": {k: eval_json(evals.get(k)) for k in keys}}, default=str)
    render_markdown(curves) + eval_markdown(keys, evals) + render_html(curves, []) + eval_html(keys, evals)
    render_csv(curves)


def compare(run: Path, tmp: Path) -> None:
    cli("compare", str(tmp / "base"), str(run))
    cli("compare", str(run), str(tmp / "base"), "--json")


def export(run: Path, tmp: Path) -> None:
    cli("export", "--inferencex", str(run), str(tmp / "export"))


def fingerprint_diff(run: Path, tmp: Path) -> None:
    cli("fingerprint", "diff", str(tmp / "base" / "q" / "conc4"), str(run / "q" / "conc4"))
    cli("fingerprint", "diff", str(run / "q" / "conc4" / "fingerprint_agg_w0.json"), str(tmp / "base" / "q" / "conc4"))


def status_views(run: Path, tmp: Path) -> None:
    """What `harness status` and `harness follow` print, without asking Slurm (it knows no such job)."""
    from slurm.jobs import find_job
    from slurm.progress import exit_status, job_json, point_views, render_table

    record = find_job(JOB, run)
    views = point_views(record, {})
    render_table(views)
    json.dumps(job_json(record, views), default=str)
    exit_status(views)
    cli("status", str(run))   # the run directory's own table


def check_results(run: Path, tmp: Path) -> None:
    cli("check", str(RECIPE), "--results", str(run), "--json")


@FUZZ
@given(damage(), st.data())
def test_report_reader(case: tuple[str, str, Any], data: st.DataObject) -> None:
    _runs(report, case, data)


@FUZZ
@given(damage(), st.data())
def test_compare_reader(case: tuple[str, str, Any], data: st.DataObject) -> None:
    _runs(compare, case, data)


@FUZZ
@given(damage(), st.data())
def test_export_reader(case: tuple[str, str, Any], data: st.DataObject) -> None:
    _runs(export, case, data)


@FUZZ
@given(damage(), st.data())
def test_fingerprint_diff_reader(case: tuple[str, str, Any], data: st.DataObject) -> None:
    _runs(fingerprint_diff, case, data)


@FUZZ
@given(damage(), st.data())
def test_status_and_follow_reader(case: tuple[str, str, Any], data: st.DataObject) -> None:
    _runs(status_views, case, data)


@pytest.fixture(scope="module")
def check_imports_loaded() -> None:
    """`check` imports AIPerf's resolver once per process (seconds): loaded before the timed examples."""
    cli("check", str(RECIPE), "--json")


@FUZZ
@given(damage(), st.data())
def test_check_results_reader(check_imports_loaded: None, case: tuple[str, str, Any], data: st.DataObject) -> None:
    _runs(check_results, case, data)


def _power_csv(tmp: Path) -> Path:
    csv = tmp / "power.csv"
    csv.write_text("timestamp_ns,gpu_index,gpu_uuid,power_w,energy_mj,sm_clock_mhz,mem_clock_mhz,temp_c,util_pct\n"
                   + "".join(f"{i * 100_000_000},0,GPU-0,80.0,{1000 + i * 8},345,3201,40,0\n" for i in range(31)))
    return csv


@FUZZ
@given(st.floats() | st.sampled_from([math.inf, -math.inf, math.nan, 0.0, 1e308]),
       st.sampled_from([".", "..", "/", "/proc/self/x", "/nonexistent/dir/v.json", "sub", "v.json", ""]))
def test_power_integrate_arguments(reference_s: float, out: str) -> None:
    """`power integrate`'s own arguments: any float as --reference-duration-s, any --validation-out."""
    with tempfile.TemporaryDirectory() as tmp:
        csv = _power_csv(Path(tmp))
        (Path(tmp) / "sub").mkdir()
        target = out if out.startswith("/") or not out else str(Path(tmp) / out)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                cli("power", "integrate", str(csv), "--start-ns", "0", "--end-ns", "3000000000",
                    f"--reference-duration-s={reference_s!r}", f"--validation-out={target}")
        except UserError as exc:
            assert str(exc) and len(one_line(str(exc))) <= 600


@pytest.mark.parametrize(("target", "kind", "arg", "command"), [
    ("q/conc4/point_result.json", "big_number", [5], "report"),
    ("q/conc4/point_result.json", "surrogate", [1], "report"),
    ("q/conc4/fingerprint_agg_w0.json", "surrogate", [2], "fingerprint_diff"),
    ("q/conc4/status.json", "typed_field", ("phase", 5), "status_views"),
])
def test_each_reader_traceback_found_by_fuzzing_is_a_refusal_or_output(target: str, kind: str, arg: Any,
                                                                       command: str) -> None:
    """The inputs that once ended in a traceback: each ends in output or a one-line UserError."""
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        build_run(run)
        build_run(Path(tmp) / "base")
        apply(run, target, kind, arg, None)   # type: ignore[arg-type]  # these kinds draw nothing
        commands = {"report": report, "fingerprint_diff": fingerprint_diff, "status_views": status_views}
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                commands[command](run, Path(tmp))
        except UserError as exc:
            assert len(one_line(str(exc))) <= 600

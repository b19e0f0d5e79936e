"""The eval runner: an accuracy eval of one point's serving config on a fresh server.

launching → loading → ready (fingerprint) → evaluating (lm-eval) → server stopped → collecting →
`eval_row_<task>.json` (InferenceX's EvalRow), `eval_result.json` (score, threshold, gate) + `status.json`,
all in `<out>/<config_key>/eval-conc<N>/`.

The server lifecycle is the point runner's (`harness.point.servers.serve`): the same launch, finite readiness,
fingerprint, signals and teardown of the whole process group. The plan is the point's with
`speculative.mode: eval` (speculative decoding on, no synthetic acceptance: real outputs). While lm-eval
runs, a server that stalls (`harness.point.replay.stall`: no new answer and no token progress while requests are in
flight, or `/health` 503 twice), an lm-eval that stops working (`harness.point.replay.client_stall`: no new answer,
no log or output growth and no CPU time in its process group, while it has no request in flight, for the stall
bound: `client_stalled`) or a disk that fills up ends the eval as the point runner does. Exit
statuses: 0 completed and at or above the threshold, 3 completed below it, 1 failed (server died or stalled,
lm-eval stalled, crashed or wrote no results, no scored sample, disk full), 128+signal when cancelled.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.artifacts import keep_out, scrub_log, write_bytes, write_json, write_text
from harness.evals import lmeval_client
from harness.evals.plan import EvalTask
from harness.evals.row import build_eval_row, extract_metrics
from harness.evals.thresholds import Threshold
from harness.point.record.inferencex_row import SIM_HW
from harness.point.record.result import spec_decoding_label
from harness.point.replay.client_stall import ClientStallWatch
from harness.point.replay.stall import StallWatch, armed_line, default_stall_timeout_s
from harness.point.servers.readiness import NotReady
from harness.point.servers.serve import (
    FreshServer,
    PointStopped,
    ServerOptions,
    prepare_server,
    server_options,
    slurm_env,
)
from harness.point.servers.server_auth import client_env
from harness.point.state.attempt import start_attempt
from harness.point.state.disk_full import FreeSpaceCheck, disk_full_error, run_guarded
from harness.point.state.ownership import PointLock
from harness.point.state.status import PointStatus
from harness.point.state.status_reserve import StatusReserve
from harness.point.state.watch import StopSignals
from harness.recipe.plan import PointPlan
from harness.recipe.server_flags.server_args import dp_attention_size
from harness.redact import add_secret_names
from launchers.process_group import ProcessGroup

EXIT_PASSED, EXIT_FAILED, EXIT_BELOW = 0, 1, 3
RESULT_FILE = "eval_result.json"
LOG_FILE = "lm_eval.log"
OUTPUT_DIR = "lm_eval"


@dataclass(frozen=True, kw_only=True)
class EvalOptions(ServerOptions):
    threshold: Threshold
    task: str = "gsm8k"
    limit: int | None = None
    eval_timeout_s: float = 6 * 3600.0


@dataclass(frozen=True)
class EvalOutcome:
    state: str
    reason: str | None
    exit_status: int
    eval_dir: Path
    result: dict[str, Any]


def options_for(task: EvalTask, server: ServerOptions) -> EvalOptions:
    """The options of `task`: how the server runs comes from `server` (a sweep's `PointOptions`, or the eval
    command's own), what is evaluated and the recorded overrides from the task."""
    return EvalOptions(**{**server_options(server), "overrides": tuple(task.overrides)}, threshold=task.threshold,
                       task=task.task, limit=task.limit, eval_timeout_s=task.eval_timeout_s)


def partial(options: EvalOptions) -> bool:
    """`--limit N` below the size of the test split: a smoke run, which `harness check` does not accept."""
    return options.limit is not None and options.limit < lmeval_client.test_split_size(options.task)


def stall_timeout_s(options: EvalOptions) -> float:
    """`--stall-timeout`, else a tenth of the eval's budget (60 to 300 s)."""
    return options.stall_timeout_s or default_stall_timeout_s(options.eval_timeout_s)


def completed_before(out_dir: Path, plan: PointPlan, task: str) -> bool:
    """An eval of the same plan and task already completed in `out_dir` (a sweep skips it without --force)."""
    path = eval_dir(out_dir, plan) / RESULT_FILE
    if not path.exists():
        return False
    prior = json.loads(path.read_text())
    return bool(prior.get("state") == "completed" and prior.get("recipe_fingerprint") == plan.fingerprint
                and prior.get("task") == task)


def eval_dir(out_dir: Path, plan: PointPlan) -> Path:
    return Path(out_dir) / plan.config_key / f"eval-conc{plan.conc}"


def row_name(task: str) -> str:
    return f"eval_row_{task}.json"


def meta_env(plan: PointPlan, task: str, limit: int | None) -> dict[str, Any]:
    """`meta_env.json`: InferenceX's eval metadata keys (single node) plus the harness's identity."""
    args = plan.settings["args"]
    tp, ep, pp = int(args.get("tp-size", 1)), int(args.get("ep-size", 1)), int(args.get("pp-size", 1))
    dcp, pcp = int(args.get("dcp-size", 1) or 1), int(args.get("pcp-size", 1) or 1)
    dp_attention = dp_attention_size(args) > 1
    return {
        "is_multinode": False, "framework": "sglang", "precision": str(plan.settings.get("precision")),
        "spec_decoding": spec_decoding_label(args.get("speculative-algorithm")),
        "recipe_fingerprint": plan.fingerprint, "tp": tp, "pp": pp, "dcp_size": dcp, "pcp_size": pcp,
        "conc": plan.conc, "ep": ep, "dp_attention": dp_attention,
        "prefill_tp": tp, "prefill_pp": pp, "prefill_dcp_size": dcp, "prefill_pcp_size": pcp, "prefill_ep": ep,
        "prefill_dp_attention": dp_attention, "prefill_num_workers": 1,
        "decode_tp": tp, "decode_pp": pp, "decode_dcp_size": dcp, "decode_pcp_size": pcp, "decode_ep": ep,
        "decode_dp_attention": dp_attention, "decode_num_workers": 1,
        "model": str(args.get("model-path")), "infmax_model_prefix": plan.model_prefix,
        # a simulated eval's row says so in the only field the contract leaves for it, as a point's row does
        "hw": SIM_HW if plan.server.engine == "sim" else plan.resources.gpu, "isl": 0, "osl": 0,
        # the harness's own identity of the eval
        "config_key": plan.config_key, "image": plan.image, "task": task, "limit": limit,
        "served_model_name": plan.client.served_model_name, "engine": plan.server.engine,
        "simulated": plan.server.engine == "sim",
    }


def gate(row: dict[str, Any] | None, threshold: Threshold) -> dict[str, Any]:
    """Pass/fail of a row against its threshold; None when there is no row or no score to judge."""
    row = row or {"score": None, "score_name": None, "score_se": None, "n_eff": None, "infrastructure_success": False}
    score = row["score"] if row["infrastructure_success"] else None
    return {"score": score, "score_name": row["score_name"], "score_se": row["score_se"],
            "n_eff": row["n_eff"], "min_score": threshold.min_score, "threshold_source": threshold.source,
            "passed": None if score is None else bool(score >= threshold.min_score)}


def _write_contract_json(path: Path, data: dict[str, Any]) -> None:
    """Another tool's format exactly: no `schema_version` added."""
    write_text(path, json.dumps(data, indent=2) + "\n")


def run_eval(plan: PointPlan, options: EvalOptions) -> EvalOutcome:
    """Run one eval end to end; never leaves a process of it running.

    A full disk (ENOSPC or EDQUOT, raised by any write of the run, or less than a few blocks left while the
    server loads or lm-eval runs) ends the eval after the server and lm-eval are stopped: `failed: disk_full`
    in `status.json` (written through the reserve kept for it) and one line on stderr."""
    add_secret_names(plan.secret_names)
    keep_out({"env": plan.server.env, "argv": plan.server.launch_argv()})  # kept out of every file
    # lm-eval runs in the task's directory: every path it is given must not depend on this one
    options = replace(options, out_dir=Path(options.out_dir).absolute(),
                      cache_dir=None if options.cache_dir is None else Path(options.cache_dir).absolute())
    edir = eval_dir(options.out_dir, plan)
    with PointLock(edir):   # one writer per eval directory: a second one is refused here, naming the holder
        status = PointStatus(edir, plan.conc, plan.config_key)
        return run_guarded(edir, status, EXIT_FAILED,
                           lambda reserve: _run_eval(plan, options, edir, status, reserve),
                           lambda reason: _disk_full_outcome(plan, options, edir, reason), what="eval")


def _disk_full_outcome(plan: PointPlan, options: EvalOptions, edir: Path, reason: str) -> EvalOutcome:
    result = {"config_key": plan.config_key, "conc": plan.conc, "task": options.task, "limit": options.limit,
              "partial": partial(options), "engine": plan.server.engine, "simulated": plan.server.engine == "sim",
              "state": "failed", "state_reason": reason, **gate(None, options.threshold), "row": None}
    return EvalOutcome("failed", reason, EXIT_FAILED, edir, result)


def _run_eval(plan: PointPlan, options: EvalOptions, edir: Path, status: PointStatus,
              reserve: StatusReserve) -> EvalOutcome:
    attempt = start_attempt(edir)   # the earlier attempt is set aside
    reserve.make()
    cache_dir = options.cache_dir or (Path(options.out_dir) / ".cache")
    status.data.update(kind="eval", attempt=attempt, task=options.task, fingerprint=plan.fingerprint,
                       launcher=options.launcher, overrides=list(options.overrides), engine=plan.server.engine,
                       simulated=plan.server.engine == "sim")
    slurm = slurm_env()
    if slurm:
        status.data["slurm"] = slurm
    meta = meta_env(plan, options.task, options.limit)
    _write_contract_json(edir / "meta_env.json", meta)
    write_json(edir / "plan.json", plan.model_dump())
    write_bytes(edir / f"task_{options.task}.yaml", lmeval_client.task_file(options.task).read_bytes())
    server = FreshServer(prepare_server(plan, edir, options.launcher, mounts=options.mounts, gpus=options.gpus,
                                        image_path=options.image_path))
    output_dir = edir / OUTPUT_DIR
    client: ProcessGroup | None = None
    state, reason = "failed", None
    with StopSignals(status) as sigs:
        try:
            server.start_ready(plan, status, sigs, options.ready_timeout_s, options.progress_every_s,
                               on_poll=FreeSpaceCheck(edir))
            base_url = server.endpoint.base_url
            api_key = server.api_key
            context = lmeval_client.served_context_length(base_url, api_key=api_key)
            if context is None:
                raise PointStopped("failed", "probe_failed: /v1/models reports no max_model_len")
            argv = lmeval_client.build_argv(task=options.task, model=plan.client.served_model_name,
                                            base_url=base_url, conc=plan.conc, context_length=context,
                                            output_dir=output_dir, limit=options.limit)
            env = lmeval_client.build_env(cache_dir)
            write_text(edir / "client_command.txt", f"cd {shlex.quote(str(lmeval_client.TASK_DIRS[options.task]))}\n"
                       + shlex.join(argv) + "\n" + "".join(f"{k}={v}\n" for k, v in sorted(env.items())))
            status.phase("evaluating", f"(lm-eval {options.task}, {plan.conc} concurrent"
                         f"{'' if options.limit is None else f', limit {options.limit}'})")
            client = ProcessGroup(argv, {**os.environ, **env, **client_env(api_key)}, edir / LOG_FILE,
                                  cwd=lmeval_client.TASK_DIRS[options.task])
            status.data["client_pid"] = client.pid
            status.save()
            code = _wait_for_lm_eval(plan, options, edir, status, server, sigs, client)
            if code != 0:
                raise PointStopped("failed", f"client_failed: lm-eval exited {code}; "
                                   f"{lmeval_client.last_error(edir / LOG_FILE)}")
            if lmeval_client.find_results(output_dir) is None:
                raise PointStopped("failed", "client_failed: lm-eval wrote no results file")
            state = "completed"
        except NotReady as exc:
            state, reason = ("cancelled", sigs.reason()) if sigs.reason() else ("failed", f"{exc.reason}: {exc}")
        except PointStopped as exc:
            state, reason = exc.state, exc.reason
        except Exception as exc:  # unexpected: still tear down and record
            if disk_full_error(exc):
                raise       # after the teardown below: run_eval records it
            state, reason = "failed", f"harness_error: {type(exc).__name__}: {exc}"
        finally:
            if client is not None:
                client.stop(grace_s=5.0)
            server.stop(options.server_stop_grace_s, status)
            scrub_log(edir / "server.log")
        status.phase("collecting")
        row, files = _collect(edir, output_dir, options.task, meta, state, reason)
        if state == "completed" and not row["infrastructure_success"]:
            state, reason = "failed", f"no_scored_samples: {row['integration_error']['message']}"
        judged = gate(row, options.threshold)
        result = {"config_key": plan.config_key, "conc": plan.conc, "task": options.task, "limit": options.limit,
                  "partial": partial(options), "engine": plan.server.engine, "simulated": plan.server.engine == "sim",
                  "recipe_fingerprint": plan.fingerprint, "image": plan.image, "state": state,
                  "state_reason": reason, "overrides": list(options.overrides), **judged,
                  "row": row_name(options.task), "attempt": attempt, **files}
        write_json(edir / RESULT_FILE, result)
        exit_status = _exit_status(state, judged["passed"], sigs.received)
        status.finish(state, reason, exit_status, passed=judged["passed"], score=judged["score"],
                      min_score=options.threshold.min_score, result=RESULT_FILE)
    return EvalOutcome(state, reason, exit_status, edir, result)


def _wait_for_lm_eval(plan: PointPlan, options: EvalOptions, edir: Path, status: PointStatus,
                      server: FreshServer, sigs: StopSignals, client: ProcessGroup) -> int | None:
    """Wait for lm-eval to exit; its exit code. Raises PointStopped on a signal, a server that died or
    stalled, an lm-eval that stalled (`client_stalled`), or the eval's time budget spent (lm-eval stopped
    first), and ENOSPC on a disk nearly full."""
    stall_s = stall_timeout_s(options)
    status.note(armed_line(stall_s))
    start = time.monotonic()
    deadline, next_note = start + options.eval_timeout_s, start + options.progress_every_s
    disk_left = FreeSpaceCheck(edir)
    stop = None
    with StallWatch(server.endpoint.base_url, stall_s, lambda: _answered(edir), record="lm-eval answer") as stall:
        # lm-eval may spend no CPU time while it waits for long answers: requests in flight are not its stall
        client_watch = ClientStallWatch(client.pgid, stall_s, lambda: _answered(edir),
                                        (edir / LOG_FILE, edir / OUTPUT_DIR), what="lm-eval answer",
                                        server_busy=lambda: None if stall.judge.in_flight is None
                                        else stall.judge.in_flight > 0)
        while client.exit_code() is None:
            disk_left()
            # a frozen client stops the server's work too: it is judged first, as a point judges AIPerf
            stop = (server.stop_reason(sigs) or client_watch.check() or stall.check()
                    or ("timeout" if time.monotonic() > deadline else None))
            if stop:
                break
            if options.progress_every_s > 0 and time.monotonic() >= next_note:
                next_note += options.progress_every_s
                _note_progress(plan, options.task, edir, status, time.monotonic() - start, client_watch.waiting())
            time.sleep(0.25)
    code = client.stop(grace_s=10.0, first_signal=signal.SIGTERM)
    status.data["client_exit_code"] = code
    if stop == "timeout":
        raise PointStopped("failed", f"client_timeout: lm-eval ran past {options.eval_timeout_s:.0f} s")
    if stop:
        raise PointStopped("cancelled" if sigs.reason() else "failed", stop)
    return code


def _answered(edir: Path) -> int:
    done = lmeval_client.progress(edir / LOG_FILE)
    return 0 if done is None else done[0]


def _collect(edir: Path, output_dir: Path, task: str, meta: dict[str, Any], state: str,
             reason: str | None) -> tuple[dict[str, Any], dict[str, str | None]]:
    """The eval row from lm-eval's results (a failure row when there are none or the run failed)."""
    found = lmeval_client.find_results(output_dir)
    files: dict[str, str | None] = {"lm_eval_results": None, "lm_eval_samples": None}
    error = None if state == "completed" else {"type": (reason or state).split(":", 1)[0],
                                               "message": reason or state}
    if found is None:
        error = error or {"type": "MissingResults", "message": "lm-eval wrote no results file"}
        m = extract_metrics({}, task, source=OUTPUT_DIR, integration_error=error)
    else:
        results_path, samples_path = found
        files = {"lm_eval_results": str(results_path.relative_to(edir)),
                 "lm_eval_samples": None if samples_path is None else str(samples_path.relative_to(edir))}
        m = extract_metrics(lmeval_client.read_results(results_path), task, source=files["lm_eval_results"] or "",
                            integration_error=error)
    row = build_eval_row(meta, m)
    _write_contract_json(edir / row_name(task), row)
    return row, files


def _note_progress(plan: PointPlan, task: str, edir: Path, status: PointStatus, elapsed_s: float,
                   waiting: str | None = None) -> None:
    """A progress line (stdout and harness.log) from lm-eval's own progress bar, and what the client watch
    sees while lm-eval is quiet."""
    done = lmeval_client.progress(edir / LOG_FILE)
    answered = "building requests" if done is None else f"{done[0]}/{done[1]} requests answered"
    line = f"c{plan.conc} eval {task}: lm-eval running {elapsed_s:.0f} s; {answered}"
    if waiting:
        line += f"; {waiting}"
    print(line, flush=True)
    status.note(f"[progress] {line}")


def _exit_status(state: str, passed: bool | None, signum: int | None) -> int:
    if state == "cancelled":
        return 128 + int(signum) if signum else EXIT_FAILED
    if state == "failed" or passed is None:
        return EXIT_FAILED
    return EXIT_PASSED if passed else EXIT_BELOW

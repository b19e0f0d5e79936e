"""Process lifecycle of the simulator: resolve args, start HTTP, load, warm up, serve, faults.

Startup mirrors SGLang's observable sequence: the port answers `/v1/models` and `/server_info`
at once, `/health` is 503 while the model "loads" (`--sim-startup-seconds`, default the
profile's), then a warmup generation runs through the engine (where a bad
`SGLANG_SIMULATE_ACC_METHOD`/`TOKEN_MODE` crashes the server, as in SGLang), then the log says
`The server is fired up and ready to roll!` and `/health` turns 200. DFLASH validates the token
mode before the port opens. SIGTERM/SIGINT stop the server with status 0. A worker over several
nodes (`--nnodes N`) loads only after every node rank has joined rank 0 (`harness.sim.batching.topology.multinode`);
the other ranks serve no HTTP.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any

from harness.artifacts import data_view
from harness.recipe.postinit import attention_dp_size, post_init_errors
from harness.redact import is_secret_name
from harness.sim.batching.engine import Engine
from harness.sim.batching.engine_config import EngineConfig
from harness.sim.batching.eval_answers import EvalAnswers
from harness.sim.batching.noise import noise_for, noise_seed_of
from harness.sim.batching.prompt import analyse
from harness.sim.batching.request import SimRequest
from harness.sim.batching.schedlog import DEBUG, INFO, SchedulerLog, log_level, log_stamp, scheduler_prefix
from harness.sim.batching.spec import SpecArgsError, SpecConfig, check_at_start, read_simulate_env, resolve_spec
from harness.sim.batching.timing import Profile, TimingModel, load_profile
from harness.sim.batching.topology.dprank import DpRanks
from harness.sim.batching.topology.multinode import JoinError, Leader, NodeGroup, node_group, run_follower
from harness.sim.batching.topology.parallel import default_cuda_graph_max_bs, layout_from_args
from harness.sim.batching.truth import TruthLog
from harness.sim.frontend.collector import collect_when_idle, hold_collections
from harness.sim.frontend.flagtable import DEFAULT_VERSION, SIM_VERSION_ENV, load_table, sglang_dests
from harness.sim.frontend.intake import stamp_arrivals

DEFAULT_MAX_RUNNING = 1024


@dataclass
class Resolved:
    profile: Profile
    timing: TimingModel
    engine: EngineConfig
    spec: SpecConfig
    model_name: str
    model_path: str
    context_length: int
    seed: int
    startup_seconds: float
    server_args: dict[str, Any]
    sglang_version: str = DEFAULT_VERSION
    dp_ranks: int = 1                 # attention data-parallel ranks; each gets 1/dp_ranks of the limits below
    rank_max_running: int = 0         # per rank: max(1, --max-running-requests // dp_ranks)
    rank_chunked_prefill: int = 0     # per rank: --chunked-prefill-size // dp_ranks
    noise_seed: int = 0               # seed of the step-time variation (harness.sim.batching.noise)
    rank_kv_capacity: int = 0         # per rank: the GPU KV pool SGLang logs as max_total_num_tokens


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split(".")[:3] if x.isdigit())


def pool_line(res: Resolved, args: argparse.Namespace, when: str) -> str:
    """The KV pool line SGLang's scheduler logs at start-up (tp rank 0, `Scheduler.__init__`), with the
    scheduler's log prefix (`[time DPn PPn TPn EPn]`, each part only where that parallelism is on).
    InferenceX reads `kv_cache_pool_tokens` from it."""
    e = res.engine
    return (f"[{when}{scheduler_prefix(args)}] max_total_num_tokens={res.rank_kv_capacity}, "
            f"chunked_prefill_size={res.rank_chunked_prefill}, "
            f"max_prefill_tokens={e.max_prefill_tokens}, max_running_requests={res.rank_max_running}, "
            f"context_len={res.context_length}, available_gpu_mem=0.00 GB")


class ServerArgsError(ValueError):
    """A combination SGLang's server-args resolution rejects (the server exits at startup)."""


def resolve(args: argparse.Namespace, env: dict[str, str]) -> Resolved:
    """Resolve defaults the way SGLang's hooks do (where the simulator models them), after SGLang's
    model-independent rejections (`harness.recipe.postinit`)."""
    errors = post_init_errors(vars(args), env.get(SIM_VERSION_ENV, DEFAULT_VERSION))
    if errors:
        raise ServerArgsError(errors[0])
    profile = load_profile(args.sim_profile)
    tp = int(args.tp_size or 1)
    spec = resolve_spec(args)
    sim_env = read_simulate_env(env)
    model_path = args.model_path or "sim-model"
    model_name = args.served_model_name or model_path
    context_length = int(args.context_length or profile.context_length)
    max_running = args.max_running_requests
    if max_running is None:
        max_running = 48 if spec.enabled else DEFAULT_MAX_RUNNING
    layout = layout_from_args(args, profile.hbm_bytes, int(max_running))
    timing = TimingModel(profile, tp, layout)
    chunked = args.chunked_prefill_size
    if chunked is None:
        chunked = profile.default_chunked_prefill_size
    # SGLang divides both per attention-DP rank (`parallel_hook.py:_handle_data_parallelism` for the chunk,
    # `kv_cache_configurator.py:resolve_max_num_reqs` for the requests); the simulator's one engine stands for
    # all ranks together, so it runs with the per-rank limits times the rank count.
    dp_ranks = attention_dp_size(vars(args))
    rank_max_running = max(1, int(max_running) // dp_ranks)
    rank_chunked = int(chunked) // dp_ranks if int(chunked) > 0 else int(chunked)
    # every attention-DP rank has a pool of its own, sized for its attention-TP group (`kvpool`)
    rank_kv = timing.kv_pool_tokens(args.mem_fraction_static, args.max_total_tokens, dp_ranks,
                                    getattr(args, "kv_cache_dtype", None))
    if rank_kv <= 0:
        frac = args.mem_fraction_static or profile.mem_fraction_static
        raise ServerArgsError("Not enough memory. Please try to increase --mem-fraction-static. "
                              f"Current value: mem_fraction_static={frac}")
    kv_capacity = rank_kv * dp_ranks
    hicache = bool(args.enable_hierarchical_cache)
    cell = timing.cell_bytes(dp_ranks, getattr(args, "kv_cache_dtype", None))
    host_capacity = dp_ranks * timing.host_pool_tokens(args.hicache_size, args.hicache_ratio, rank_kv, cell) \
        if hicache else 0
    seed = args.sim_seed if args.sim_seed is not None else (args.random_seed if args.random_seed is not None else 0)
    cfg = EngineConfig(
        max_running=rank_max_running * dp_ranks,
        chunked_prefill_size=rank_chunked * dp_ranks if rank_chunked > 0 else rank_chunked,
        max_prefill_tokens=int(args.max_prefill_tokens),
        prefill_decode_interval=int(args.prefill_decode_interval or 0),
        prefill_decode_interval_min_bs=int(getattr(args, "prefill_decode_interval_min_bs", 0) or 0),
        stream_interval=max(1, int(args.stream_interval or 1)),
        spec=spec,
        sim_env=sim_env,
        kv_capacity=kv_capacity,
        hicache=hicache,
        host_capacity=host_capacity,
        write_policy=args.hicache_write_policy,
        decode_log_interval=int(args.decode_log_interval or 40),
        seed=int(seed),
        schedule_conservativeness=float(getattr(args, "schedule_conservativeness", None) or 1.0),
        stream_rule="modulo" if _release(env.get(SIM_VERSION_ENV, DEFAULT_VERSION)) < (0, 5, 23) else "unsent",
    )
    version = env.get(SIM_VERSION_ENV, DEFAULT_VERSION)
    server_args = {k: getattr(args, k) for k in sglang_dests(version) if hasattr(args, k)}
    server_args.update(
        model_path=model_path,
        served_model_name=model_name,
        context_length=context_length,
        max_running_requests=int(max_running),
        chunked_prefill_size=rank_chunked,
        max_total_tokens=rank_kv,
        stream_interval=cfg.stream_interval,
        random_seed=cfg.seed,
    )
    if server_args.get("cuda_graph_max_bs_decode") is None and "cuda_graph_max_bs_decode" in server_args:
        server_args["cuda_graph_max_bs_decode"] = default_cuda_graph_max_bs(profile.hbm_bytes, tp, int(max_running))
    if spec.enabled:
        server_args.update(
            speculative_algorithm=spec.algorithm,
            speculative_num_steps=spec.num_steps,
            speculative_eagle_topk=spec.eagle_topk,
            speculative_num_draft_tokens=spec.num_draft_tokens,
        )
    if hicache and not args.hicache_ratio:
        server_args["hicache_ratio"] = 2.0
    startup = args.sim_startup_seconds if args.sim_startup_seconds is not None else profile.startup_seconds
    noise_seed = noise_seed_of(args.sim_seed, args.random_seed)
    return Resolved(profile, timing, cfg, spec, model_name, model_path, context_length, int(seed), startup,
                    server_args, version, dp_ranks, rank_max_running, rank_chunked, noise_seed, rank_kv)


def server_info(res: Resolved, argv: list[str], env: dict[str, str]) -> dict[str, Any]:
    info: dict[str, Any] = dict(res.server_args)
    info["launch_command"] = " ".join(["python3", "-m", "sglang.launch_server", *argv])
    info["version"] = load_table(res.sglang_version)["sglang_version"]
    info["frontend"] = "python"
    info["startup_time"] = time.time()
    info["simulator"] = {
        "engine": "sim",
        "profile": res.profile.name,
        "calibrated": res.profile.calibrated,
        "kv_pool_tokens": res.engine.kv_capacity,
        "host_pool_tokens": res.engine.host_capacity,
        "seed": res.seed,
    }
    state: dict[str, Any] = dict(res.server_args)
    state["world_size"] = int(res.server_args.get("tp_size") or 1)
    state["effective_max_running_requests_per_dp"] = res.rank_max_running
    if env.get("SGLANG_EXPOSE_OWN_ENV_VARS", "").lower() in ("1", "true", "yes"):
        state["env_vars"] = {
            k: v for k, v in sorted(env.items())
            if k.startswith("SGLANG_") and not is_secret_name(k)
        }
    info["internal_states"] = [state]
    # Not the harness writing: the simulator's own HTTP reply, which unlike SGLang never echoes `api_key`.
    redacted: dict[str, Any] = data_view(info)
    return redacted


def serve_forever(args: argparse.Namespace, argv: list[str]) -> int:
    env = dict(os.environ)
    try:
        res = resolve(args, env)
    except (FileNotFoundError, SpecArgsError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ServerArgsError as exc:  # SGLang raises ValueError from ServerArgs resolution: traceback, exit 1
        print(f"ValueError: {exc}", file=sys.stderr)
        return 1
    answers = None
    if args.sim_eval_answers:
        try:
            answers = EvalAnswers.from_file(args.sim_eval_answers, args.sim_eval_accuracy, res.seed)
        except (OSError, ValueError) as exc:
            print(f"error: --sim-eval-answers: {exc}", file=sys.stderr)
            return 2
    try:
        check_at_start(res.spec, res.engine.sim_env)
    except ValueError:
        traceback.print_exc()
        return 1
    try:
        group = node_group(args, env)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if group is not None and not group.leader:
        return run_follower(group)
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    return asyncio.run(_serve(args, argv, res, env, answers, group))


async def _serve(args: argparse.Namespace, argv: list[str], res: Resolved, env: dict[str, str],
                 answers: EvalAnswers | None, group: NodeGroup | None = None) -> int:
    from aiohttp import web

    from harness.sim.batching.topology.pdroles import (  # heavy: aiohttp (bootstrap), only when serving
        PrefillRole,
        make_role,
    )
    from harness.sim.frontend.server import build_app  # heavy: aiohttp, only when serving
    from harness.sim.frontend.server_state import Faults, ServerState  # heavy: aiohttp (pdroles), only when serving

    loop = asyncio.get_running_loop()
    level = log_level(args)   # --log-level: batch lines at info (SGLang's default), routed lines at debug too
    batch_log = SchedulerLog(scheduler_prefix(args), res.engine.decode_log_interval, res.spec) \
        if level <= INFO else None
    engine = Engine(res.engine, res.timing, noise=noise_for(res.profile, res.noise_seed), log=batch_log)
    truth = TruthLog(args.sim_truth_log) if args.sim_truth_log else None
    mode = str(getattr(args, "disaggregation_mode", None) or "null")
    role = make_role(mode, engine, res.profile.kv_bytes_per_token, res.profile.transfer_gbps, env)
    st = ServerState(
        engine=engine,
        model_name=res.model_name,
        model_path=res.model_path,
        context_length=res.context_length,
        server_info=server_info(res, argv, env),
        enable_metrics=bool(args.enable_metrics),
        enable_cache_report=bool(args.enable_cache_report),
        truth=truth,
        faults=Faults(args.sim_error_rate, args.sim_drop_rate, random.Random(res.seed + 1),
                      errors_after_requests=args.sim_errors_after_requests,
                      stall_after_requests=args.sim_stall_after_requests),
        eval_answers=answers,
        allow_auto_truncate=bool(getattr(args, "allow_auto_truncate", False)),
        health_generates=env.get("SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION", "true").lower()
        not in ("false", "0", "no", "n"),
        api_key=getattr(args, "api_key", None),
        admin_api_key=getattr(args, "admin_api_key", None),
        role=role,
        dp=DpRanks(res.dp_ranks, res.dp_ranks > 1 or bool(getattr(args, "enable_dp_attention", False))),
        log_routing=level <= DEBUG,
    )
    runner = web.AppRunner(build_app(st), access_log=None, handler_cancellation=True)
    await runner.setup()
    stamp_arrivals(runner)
    site = web.TCPSite(runner, args.host, int(args.port), reuse_address=True)
    await site.start()
    bootstrap_runner = None
    if isinstance(role, PrefillRole):
        bootstrap_runner = web.AppRunner(role.server.app(), access_log=None, handler_cancellation=True)
        await bootstrap_runner.setup()
        port = int(args.disaggregation_bootstrap_port)
        await web.TCPSite(bootstrap_runner, args.host, port, reuse_address=True).start()
        print(f"[sim] prefill worker: bootstrap server on {args.host}:{port}", flush=True)
    elif role is not None:
        print(f"[sim] decode worker: KV handover at {res.profile.transfer_gbps:g} Gb/s", flush=True)
    print(pool_line(res, args, log_stamp(time.time())), flush=True)
    print(f"[sim] listening on http://{args.host}:{args.port} (profile {res.profile.name}, "
          f"engine sim, not calibrated)", flush=True)
    print(f"[sim] step-time noise seed {res.noise_seed} (reproduce with --sim-seed {res.noise_seed})", flush=True)
    stop = asyncio.Event()
    exit_code = 0
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    engine_task = asyncio.create_task(engine.run())

    def crashed(task: asyncio.Task[None]) -> None:
        nonlocal exit_code
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            print("Scheduler hit an exception: ", end="", file=sys.stderr)
            traceback.print_exception(exc, file=sys.stderr)
            sys.stderr.flush()
            exit_code = 1
            stop.set()

    engine_task.add_done_callback(crashed)
    leader = Leader(group) if group is not None else None

    def rank_lost(rank: int) -> None:
        nonlocal exit_code
        exit_code = 1
        stop.set()

    async def startup() -> None:
        nonlocal exit_code
        if leader is not None:
            try:
                await leader.gather()
            except (JoinError, OSError) as exc:
                print(f"[sim] multi-node: {exc}", file=sys.stderr, flush=True)
                exit_code = 1
                stop.set()
                return
            leader.watch(rank_lost)
        await asyncio.sleep(res.startup_seconds)
        if not args.skip_server_warmup:
            w = SimRequest(rid="WARMUP", prompt_tokens=0, block_hashes=(), target_tokens=8,
                           finish_reason="length", stream=False, arrival_ns=time.time_ns())
            p = analyse(b"The capital city of France is")
            w.prompt_tokens = p.tokens
            engine.submit(w)
            while not w.finished and not engine_task.done():
                await w.wake.wait()
                w.wake.clear()
            if engine_task.done():
                return
        if args.sim_errors_after is not None:
            st.faults.errors_from_ns = time.monotonic_ns() + int(args.sim_errors_after * 1e9)
        hold_collections()   # what is alive now lives as long as the server; collections only when idle
        background.append(asyncio.create_task(collect_when_idle(lambda: engine.busy)))
        st.ready = True
        print("The server is fired up and ready to roll!", flush=True)
        if args.sim_crash_after is not None:
            loop.call_later(args.sim_crash_after, _crash)
        if args.sim_stall_after is not None:
            loop.call_later(args.sim_stall_after, engine.stall)

    background: list[asyncio.Task[None]] = []
    start_task = asyncio.create_task(startup())
    await stop.wait()
    for task in (start_task, *background):
        task.cancel()
    engine_task.cancel()
    if leader is not None:
        await leader.close()
    if truth is not None:
        truth.close()
    # Open streams may keep cleanup waiting; the process is exiting anyway.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(runner.cleanup(), timeout=2.0)
    if bootstrap_runner is not None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(bootstrap_runner.cleanup(), timeout=1.0)
    return exit_code


def _crash() -> None:
    print("[sim] simulated crash (--sim-crash-after)", file=sys.stderr, flush=True)
    os._exit(1)

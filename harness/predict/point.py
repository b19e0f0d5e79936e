"""Predict one planned point: its server command resolved as the simulator would start it, its client's corpus
replayed on a virtual clock (`harness.predict.virtual`), summarized (`harness.predict.summary`).

The server command is the point's own (`harness plan`): the simulator's parser reads the SGLang flags after
`-m <module>`, so a recipe for real SGLang predicts too, on its `sim_profile` (or `--profile`). Deployments
(prefill/decode workers behind a router) are not predicted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.predict.summary import PointPrediction, Predicted, summarize
from harness.predict.virtual import pooled, run_window
from harness.predict.workload import lane_script, warmup_calls
from harness.sim.batching.engine import Engine
from harness.sim.batching.noise import noise_for
from harness.sim.frontend.app import ServerArgsError, resolve
from harness.sim.frontend.cli import build_parser
from harness.sim.frontend.flagtable import SIM_VERSION_ENV
from harness.traces.files import read_local
from harness.traces.schema import Corpus


def server_flags(argv: list[str]) -> list[str]:
    """The launch flags of a server command (what follows `-m <module>`, else everything after the program)."""
    if "-m" in argv:
        i = argv.index("-m")
        return list(argv[i + 2:])
    return list(argv[1:])


def sim_argv(argv: list[str], profile: str) -> list[str]:
    """The simulator's argv for a server command: its flags, with `--sim-profile` set to `profile`."""
    flags = server_flags(argv)
    out: list[str] = []
    skip = False
    for tok in flags:
        if skip:
            skip = False
            continue
        if tok == "--sim-profile":
            skip = True
            continue
        if tok.startswith("--sim-profile="):
            continue
        out.append(tok)
    return [*out, "--sim-profile", profile]


def load_corpus(traces: str, cache: dict[str, Corpus]) -> Corpus:
    """The point's local trace corpus (read once per path)."""
    if traces not in cache:
        path = Path(traces)
        if not path.exists():
            raise UserError(f"predict: the corpus {traces!r} is not a local path (predict replays a local corpus, "
                            "e.g. one made by `harness traces synth`)")
        cache[traces] = read_local(path)
    return cache[traces]


def profile_of(plan: Any, default_profile: str, override: str | None) -> str:
    """The simulator profile a point is predicted on: `--profile`, else the one in its command, else the recipe's."""
    if override:
        return override
    flags = server_flags(list(plan.server.argv))
    if "--sim-profile" in flags:
        i = flags.index("--sim-profile")
        if i + 1 < len(flags):
            return flags[i + 1]
    return default_profile


def predict_point(plan: Any, profile: str, seed: int | None, corpora: dict[str, Corpus],
                  duration_s: float | None = None, samples: int = 1) -> tuple[PointPrediction, Predicted]:
    """Predict one point of `harness plan` (a PointPlan) on simulator profile `profile`, pooling `samples` windows
    (each with its own trajectory starts and noise)."""

    if plan.deployment is not None:
        raise UserError(f"predict: {plan.name} is a deployment (workers behind a router); predict covers "
                        "single-server points")
    env = dict(plan.server.env)
    parser = build_parser(env.get(SIM_VERSION_ENV))
    try:
        args = parser.parse_args(sim_argv(list(plan.server.argv), profile))
        res = resolve(args, env)
    except SystemExit as exc:
        raise UserError(f"predict: {plan.name}: the simulator refuses the server command") from exc
    except (ServerArgsError, FileNotFoundError) as exc:
        raise UserError(f"predict: {plan.name}: {exc}") from None
    client = plan.client
    noise_seed = seed if seed is not None else (args.sim_seed if args.sim_seed is not None else client.seed)
    corpus = load_corpus(client.traces, corpora)
    windows = []
    warmup = warmup_calls(client.warmup_requests_per_lane)
    for k in range(max(1, samples)):
        # sample k: its own server start (noise seed + k) and its own trajectory starts (client seed + k)
        engine = Engine(res.engine, res.timing, noise=noise_for(res.profile, noise_seed + k))
        lanes = [lane_script(corpus, i, client.conc, client.seed + k, warmup) for i in range(client.conc)]
        windows.append(run_window(engine, lanes, duration_s or client.duration_s, res.context_length,
                                  burst=client.burst_phase_starts, grace_s=client.grace_s))
    gpus = int(getattr(plan.resources, "num_gpus", 1) or 1)
    point = summarize(plan.name, client.conc, gpus, res.engine.kv_capacity, pooled(windows), len(windows))
    return point, Predicted(profile=res.profile.name, calibrated=res.profile.calibrated, seed=noise_seed)

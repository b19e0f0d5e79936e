"""The validity verdict of a point: pure checks over the built result, with configurable thresholds.

Every reason has a stable code. The thresholds used are recorded in the verdict, so a reader can tell
what "valid" meant for this result. InferenceX's own gates are among them: its error-rate gate (failed /
completed requests above 0.10, `error_ratio`), its required `sglang:` server-metrics prefix
(`server_metrics_missing`), and the runtime reasons the AgentX client gives for an invalid submission (latency
coverage under 95 % of the window, context overflows above 1 %, a cancelled run). `env_not_applied`: a variable the
harness set for the server (recipe `server.env`, the golden `SGLANG_SIMULATE_ACC_*`, its own) is missing from the
running server's environment or has another value there (a container runtime's precedence, an entrypoint).
`window_clock_mismatch`: the wall clock stepped inside the window (`window_clock`): AIPerf's profiling phase on the
wall clock is longer or shorter than the same phase timed by the harness on the monotonic clock, beyond
max(2 s, 2 %), or the window is longer than the requested window and its grace, or not positive.
The thresholds themselves are the recipe's (`harness.recipe.thresholds`).
"""

from __future__ import annotations

from typing import Any

from harness.point.replay.client_phase import ProfilingClock
from harness.point.servers.server_env import describe_not_applied
from harness.power.inferencex_window import aiperf_bounds_ns
from harness.recipe.thresholds import Thresholds

CLOCK_SLACK_S = 2.0        # the profiling phase is seen within a second of its start
CLOCK_SLACK_FRACTION = 0.02
# How far AIPerf's profiling phase on the wall clock may differ from the harness's monotonic timing of it, either
# way: 2 s for the two sights of AIPerf's log (each at most `PHASE_CHECK_S` late), and 2 % of the phase, 40 times
# the most an NTP slew moves a clock (500 ppm), so a step that leaves the point valid moves its throughput < 2 %.
PHASE_TOLERANCE_S = 2.0
PHASE_TOLERANCE_FRACTION = 0.02


def window_clock(metrics: dict[str, Any], requested_s: float, grace_s: float, profiling: ProfilingClock,
                 summary: dict[str, Any] | None = None) -> dict[str, Any]:
    """The record's `window_clock` block. The window as measured on the wall clock (AIPerf's request times) and the
    longest it can honestly be (the requested window and its grace, and the monotonic span from the profiling
    phase's start to the client's end); AIPerf's profiling phase on the wall clock (its summary's `start_time` →
    `end_time`) and the same phase timed by the harness on the monotonic clock, with the tolerance between them;
    whether all agree. A wall-clock step inside the window (an NTP step) moves AIPerf's times and not the monotonic
    clock: a forward step makes the window read longer, a backward one shorter (its throughput higher)."""
    tput = metrics.get("throughput")
    wall = float(tput["duration_seconds"]) if tput else None
    slack = CLOCK_SLACK_S + CLOCK_SLACK_FRACTION * requested_s
    bound = requested_s + grace_s + slack
    if profiling.span_s is not None:
        bound = min(bound, profiling.span_s + slack)
    within_bound = None if wall is None else 0 < wall <= bound
    bounds = aiperf_bounds_ns(summary)
    phase_wall = None if bounds is None else round((bounds[1] - bounds[0]) / 1e9, 3)
    phase_mono = None if profiling.phase_s is None else round(profiling.phase_s, 3)
    tolerance = None if phase_mono is None else round(max(PHASE_TOLERANCE_S, PHASE_TOLERANCE_FRACTION * phase_mono), 3)
    same_phase = None if phase_wall is None or phase_mono is None or tolerance is None \
        else abs(phase_wall - phase_mono) <= tolerance
    checks = [c for c in (within_bound, same_phase) if c is not None]
    return {"wall_s": wall, "monotonic_s": profiling.span_s, "requested_s": requested_s, "grace_s": grace_s,
            "max_s": round(bound, 3), "phase_wall_s": phase_wall, "phase_monotonic_s": phase_mono,
            "phase_tolerance_s": tolerance, "agrees": all(checks) if checks else None}


def clock_mismatch_message(clock: dict[str, Any]) -> str:
    """Why the window's clocks disagree, naming both spans (the record's `window_clock`)."""
    why: list[str] = []
    wall, mono, tolerance = clock.get("phase_wall_s"), clock.get("phase_monotonic_s"), clock.get("phase_tolerance_s")
    if wall is not None and mono is not None and tolerance is not None and abs(wall - mono) > tolerance:
        way = "shorter" if wall < mono else "longer"
        why.append(f"AIPerf's profiling phase reads {wall:.1f} s on the wall clock but {mono:.1f} s on the monotonic "
                   f"clock, {abs(wall - mono):.1f} s {way} (tolerance {tolerance:.1f} s)")
    window = clock.get("wall_s")
    if window is not None and not 0 < window <= clock["max_s"]:
        span = clock.get("monotonic_s")
        measured = f"{span:.1f} s by the monotonic clock, " if span is not None else ""
        why.append(f"the window reads {window:.1f} s on the wall clock, but {measured}the requested "
                   f"{clock['requested_s']:.0f} s and its {clock['grace_s']:.0f} s grace allow at most "
                   f"{clock['max_s']:.1f} s")
    return "; ".join(why) + ": the wall clock stepped inside the window"


def with_required_power(thresholds: Thresholds, required: bool) -> Thresholds:
    """The recipe's thresholds, with strict power switched on when `--require-power` asks for it."""
    return thresholds.model_copy(update={"require_power": True}) if required else thresholds


def _reason(code: str, message: str) -> dict[str, str]:
    return {"code": code, "message": message}


# The AgentX client's runtime reasons for an invalid submission (its `submission_invalid_reasons`) that say the
# measurement itself is not sound; `unsafe_override` (a smoke run) only makes a point unofficial.
CLIENT_RUNTIME_REASONS = {
    "insufficient_profile_metric_coverage": ("latency_coverage", "AIPerf: latency observations cover less of the "
                                             "profiling window than the scenario requires (95 %)"),
    "context_overflow_rate_exceeded": ("context_overflow_rate", "AIPerf: context-overflow responses above the "
                                       "scenario's 1 % limit"),
    "run_cancelled": ("run_cancelled", "AIPerf: the run was cancelled before its window ended"),
}


def client_runtime_reasons(submission: Any) -> list[dict[str, str]]:
    """Our reasons for the AgentX client's runtime invalidity tags in its submission check."""
    listed = submission.get("submission_invalid_reasons") if isinstance(submission, dict) else None
    tags = [str(t) for t in listed] if isinstance(listed, list) else []
    return [_reason(*CLIENT_RUNTIME_REASONS[t]) for t in tags if t in CLIENT_RUNTIME_REASONS]


def verdict(result: dict[str, Any], requested_duration_s: float, thresholds: Thresholds) -> dict[str, Any]:
    """`{valid, reasons[], thresholds}` for a result dict (see `harness.point.record.result`)."""
    reasons: list[dict[str, str]] = []
    acc = result.get("request_accounting", {})
    ok = int(acc.get("successful", 0))
    errors = int(acc.get("errors", 0))
    cancelled = int(acc.get("cancelled_at_cutoff") or 0)
    sent = ok + errors + cancelled
    if ok < thresholds.min_completed_requests:
        reasons.append(_reason("too_few_completed", f"{ok} successful requests < {thresholds.min_completed_requests}"))
    tput = result.get("request_metrics", {}).get("throughput")
    window = tput["duration_seconds"] if tput else 0.0
    if window < thresholds.min_window_fraction * requested_duration_s:
        reasons.append(_reason("window_too_short", f"measured window {window:.1f} s < "
                               f"{thresholds.min_window_fraction:.0%} of the requested {requested_duration_s:.0f} s"))
    clock = result.get("window_clock") or {}
    if clock.get("agrees") is False:
        reasons.append(_reason("window_clock_mismatch", clock_mismatch_message(clock)))
    if errors and (not ok or errors / ok > thresholds.max_error_ratio):
        rate = f"{errors / ok:.1%}" if ok else "no request completed"
        reasons.append(_reason("error_ratio", f"{errors} failed against {ok} completed requests "
                               f"({rate} > {thresholds.max_error_ratio:.0%}, InferenceX's error-rate gate)"))
    if acc.get("cancelled_at_cutoff") is None:
        reasons.append(_reason("cancelled_unknown", "requests cancelled at the cutoff could not be counted"))
    elif sent and cancelled / sent > thresholds.max_cancelled_ratio:
        reasons.append(_reason("cancelled_ratio", f"{cancelled}/{sent} requests cancelled at the cutoff "
                               f"({cancelled / sent:.1%} > {thresholds.max_cancelled_ratio:.0%})"))
    achieved = (result.get("achieved_concurrency") or {}).get("sessions")
    target = result.get("conc")
    if achieved is not None and target and achieved < thresholds.min_concurrency_ratio * target:
        reasons.append(_reason("concurrency_below_target", f"achieved concurrency {achieved:.2f} live sessions "
                               f"< {thresholds.min_concurrency_ratio:.0%} of target {target}"))
    overflows = int(result.get("context_overflow_count") or 0)
    if overflows:
        reasons.append(_reason("context_overflow", f"{overflows} requests exceeded the context length"))
    spec = result.get("speculative_acceptance") or {}
    if spec.get("target") is not None:
        got = spec.get("achieved")
        if got is None:
            reasons.append(_reason("accept_length_unmeasured",
                                   f"target accept length {spec['target']} but none measured: {spec.get('reason')}"))
        else:
            # compared with what the golden AL gives for the run's own output lengths (the last verify step
            # before max_tokens commits only what is left), not with the golden AL itself
            want = spec.get("expected") or spec["target"]
            if abs(got - want) / want > thresholds.max_accept_length_error:
                basis = (f"{want:.3f} expected for the observed output lengths at the golden {spec['target']}"
                         if spec.get("expected") else f"target {spec['target']}")
                reasons.append(_reason("accept_length_off_target", f"achieved accept length {got:.3f} vs {basis} "
                                       f"(> {thresholds.max_accept_length_error:.0%} off)"))
    if result.get("server_metrics_sglang") is False:
        reasons.append(_reason("server_metrics_missing", "AIPerf captured no `sglang:` server metric "
                               "(InferenceX requires the prefix)"))
    not_applied = describe_not_applied(result.get("server_env") or {})
    if not_applied:
        reasons.append(_reason("env_not_applied", "the server does not have what the harness set: " + not_applied))
    reasons += client_runtime_reasons(result.get("aiperf_submission"))
    if thresholds.require_power and not result.get("power_valid"):
        why = ", ".join(result.get("power_invalid_reasons") or []) or "unknown"
        reasons.append(_reason("power_invalid", f"power required but invalid: {why}"))
    return {"valid": not reasons, "reasons": reasons, "thresholds": thresholds.model_dump()}

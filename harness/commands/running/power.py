"""`harness power`: sample GPU power to a CSV, or integrate a CSV over a window.

    harness power sample --seconds 30 --out power.csv [--rate-hz 10]
    harness power integrate power.csv --start-ns A --end-ns B [--expected-gpus N] [--json]

`sample` stops early, its CSV complete, on SIGTERM or SIGINT (how a deployment stops the sampler it runs on
each node); it exits 1 when NVML is unavailable (the CSV then holds only its header); `integrate` exits 0
when power is valid over the window and 1 when it is not, printing the reasons either way.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from harness.artifacts import print_json
from harness.errors import UserError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="power_command", metavar="ACTION", required=True)

    sample = sub.add_parser("sample", help="sample GPU power with NVML for a while, writing a power CSV")
    sample.add_argument("--seconds", type=float, required=True, help="how long to sample")
    sample.add_argument(
        "--out", type=Path, required=True, help="CSV to write (a .sampler.json sidecar goes beside it)"
    )
    sample.add_argument("--rate-hz", type=float, default=10.0, help="samples per second per GPU (default 10)")

    integ = sub.add_parser("integrate", help="energy and validity of a power CSV over a window")
    integ.add_argument("csv", type=Path, help="power CSV written by `harness power sample` or a point run")
    integ.add_argument("--start-ns", type=int, required=True, help="window start, wall-clock UTC ns")
    integ.add_argument("--end-ns", type=int, required=True, help="window end, wall-clock UTC ns")
    integ.add_argument("--expected-gpus", type=int, default=None, help="GPUs the point uses (checked)")
    integ.add_argument(
        "--reference-duration-s",
        type=float,
        default=None,
        help="the window's length by another clock (e.g. the client's benchmark duration), cross-checked",
    )
    integ.add_argument(
        "--validation-out", type=Path, default=None, help="also write power_validation.json here"
    )
    integ.add_argument("--json", action="store_true", help="print the validation JSON")


def main(args: argparse.Namespace) -> int:
    if args.power_command == "sample":
        return _sample(args)
    return _integrate(args)


class _Stop(Exception):
    """SIGTERM: stop sampling, as Ctrl-C does."""


def _raise_stop(signum: int, frame: object) -> None:
    raise _Stop()


def _sample(args: argparse.Namespace) -> int:
    import signal
    import time

    from harness.power import PowerSampler

    if args.seconds <= 0:
        raise UserError(f"--seconds: expected a positive number of seconds, got {args.seconds}")
    if not 0 < args.rate_hz <= 100:
        raise UserError(f"--rate-hz: expected a rate in (0, 100] Hz, got {args.rate_hz}")
    sampler = PowerSampler(None, args.out, rate_hz=args.rate_hz)
    signal.signal(signal.SIGTERM, _raise_stop)
    sampler.start()
    started = time.time_ns()
    try:
        if sampler.unavailable_reason is None:
            time.sleep(args.seconds)
    except (_Stop, KeyboardInterrupt):
        pass
    finally:
        ended = time.time_ns()
        sampler.stop()
    if sampler.unavailable_reason is not None:
        print(f"{args.out}: header only; {sampler.unavailable_reason}", file=sys.stderr)
        return 1
    gpus = ", ".join(f"{g.index}:{g.uuid}" for g in sampler.gpus)
    print(
        f"{args.out}: {sampler.rows_written} rows, {len(sampler.gpus)} GPU(s) [{gpus}], {args.rate_hz:g} Hz"
    )
    print(f"window: --start-ns {started} --end-ns {ended}")
    return 0


MAX_REFERENCE_S = 1e9   # about 31 years: any real window is shorter


def _check_out(path: Path) -> None:
    """`--validation-out` names a file to write, not a directory (checked before any work; a directory it
    needs is created when it is written)."""
    if path.is_dir() or path.name in ("", ".", ".."):
        raise UserError(f"--validation-out {path}: is a directory; expected a file name such as "
                        f"{path / 'power_validation.json'}")


def _integrate(args: argparse.Namespace) -> int:
    from harness.artifacts import write_json
    from harness.power import integrate_power

    if args.end_ns <= args.start_ns:
        raise UserError(f"--end-ns: expected a time after --start-ns {args.start_ns}, got {args.end_ns}")
    if args.expected_gpus is not None and args.expected_gpus < 1:
        raise UserError(f"--expected-gpus: expected a positive count, got {args.expected_gpus}")
    ref_s = args.reference_duration_s
    if ref_s is not None and not (math.isfinite(ref_s) and 0 < ref_s <= MAX_REFERENCE_S):
        raise UserError(f"--reference-duration-s: expected seconds above 0 and at most {MAX_REFERENCE_S:g}, "
                        f"got {ref_s}")
    reference = None if ref_s is None else round(ref_s * 1e9)
    if args.validation_out is not None:
        _check_out(args.validation_out)
    report = integrate_power(
        args.csv, args.start_ns, args.end_ns, args.expected_gpus, reference_duration_ns=reference
    )
    body = report.validation_json()
    if args.validation_out is not None:
        try:
            write_json(args.validation_out, body)
        except OSError as exc:
            raise UserError(f"--validation-out {args.validation_out}: cannot write it: "
                            f"{exc.strerror or exc}") from None
    if args.json:
        print_json(body)
    else:
        print(f"power_valid: {str(report.valid).lower()}  window: {report.duration_s:.3f} s")
        for reason in report.reasons:
            print(f"  reason {reason.code}: {reason.message}")
        for gpu in report.gpus:
            head = f"  GPU {gpu.gpu_index} {gpu.gpu_uuid}: {gpu.samples_total} samples, {gpu.samples_in_window} in window"
            if gpu.energy_j is None:
                print(f"{head}; no energy (window not bracketed)")
                continue
            counter = "-" if gpu.counter_energy_j is None else f"{gpu.counter_energy_j:.3f} J"
            print(
                f"{head}, max gap {gpu.max_gap_s:.3f} s; energy {gpu.energy_j:.3f} J ({gpu.energy_source}), "
                f"avg {gpu.avg_power_w:.3f} W; counter {counter}, trapezoid {gpu.trapezoid_energy_j:.3f} J"
            )
        print(f"total_gpu_energy_j: {report.total_energy_j}")
    return 0 if report.valid else 1

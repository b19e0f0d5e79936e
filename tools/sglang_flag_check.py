"""Hold the harness's flag validator and the simulator's parser to SGLang's real argparse, value by value.

    python tools/sglang_flag_check.py 0.5.23 --wheel-dir /tmp/sglang-0.5.23   # or without: downloads the wheel

For a list of values that exercise each argparse type the tables record (sizes, integers, floats, choices,
lists, a store-const), it prints whether real SGLang, `harness.recipe.flags.validate_args` and the simulator's
parser accept each; then it parses every point's server argv of the shipped recipes with the real parser.
Exit status 1 on any disagreement.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sglang_flag_table import ROOT, real_parser, unpack_wheel  # noqa: E402

CASES: list[tuple[str, Any]] = [
    *[("--context-length", v) for v in ("128K", "1m", "1Ki", "1T", "25.6k", "1.5Ki", "131072", "abc")],
    *[("--max-running-requests", v) for v in ("abc", "24", "2.5")],
    *[("--swa-full-tokens-ratio", v) for v in ("x", "0.3")],
    *[("--cuda-graph-backend-decode", v) for v in ("bogus", "tc_piecewise", "full")],
    ("--hicache-write-policy", "writeback"), ("--hicache-write-policy", "write_back"),
    ("--monokernel-backend", "amd"), ("--monokernel-backend", "x"),
    ("--cuda-graph-bs-decode", ["1", "2", "4"]),
]


def _accepts(parser: argparse.ArgumentParser, argv: list[str]) -> bool:
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            parser.parse_args(argv)
    except (SystemExit, argparse.ArgumentError, ValueError, TypeError):
        return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("version")
    ap.add_argument("--wheel-dir", type=Path, default=None)
    args = ap.parse_args()
    from harness.recipe import flags
    from harness.recipe.points import load_plans
    from harness.sim.cli import build_parser

    table, sim = flags.load_table(args.version), build_parser(args.version)
    bad = 0
    with tempfile.TemporaryDirectory(prefix="sglang-check-") as tmp:
        real = real_parser(unpack_wheel(args.version, args.wheel_dir, Path(tmp)), exit_on_error=False)
        for flag, value in CASES:
            tokens = list(value) if isinstance(value, list) else [value]
            r = _accepts(real, ["--model-path", "m", flag, *tokens])
            s = _accepts(sim, [flag, *tokens])
            try:
                flags.validate_args(table, {flag: value}, "check")
                h = True
            except Exception:
                h = False
            bad += not r == s == h
            print(f"{flag} {value!r}: sglang={r} simulator={s} harness={h}{'' if r == s == h else '  MISMATCH'}")
        parsed = 0
        for path in sorted((ROOT / "recipes").glob("musespark-*.yaml")):
            _, plans = load_plans(path, overrides=[f"server.sglang_version={args.version}"])
            for plan in plans:
                real.parse_args(plan.server.argv[3:])
                parsed += 1
    print(f"sglang {args.version}: {parsed} recipe points parsed by the real parser; {bad} disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`harness export --inferencex RUN_DIR OUT`: a run laid out as InferenceX's artifacts."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--inferencex", action="store_true", required=True,
                        help="lay the results out as InferenceX's artifacts (bmk_agentic_*, agentic_*, server_logs_*)")
    parser.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="a run directory (searched recursively)")
    parser.add_argument("out", type=Path, metavar="OUT", help="where the artifacts go: a new or empty directory")
    parser.add_argument("--include-unofficial", action="store_true",
                        help="also export points that are not publishable (unofficial smoke runs, simulated points, "
                        "invalid points: each row's verdict goes into OUT/harness_verdicts.json, which report and "
                        "check --results read); a failed point is never exported")


def main(args: argparse.Namespace) -> int:
    from harness.report.results.export import export_inferencex

    summary = export_inferencex(args.run_dir, args.out, args.include_unofficial)
    print(f"{args.out}: {summary.rows} InferenceX row(s), {summary.evals} eval(s), {len(summary.files)} file(s)")
    if summary.failed:
        print(f"left out {len(summary.failed)} failed point(s), never exported: "
              + "; ".join(f"{p} ({why})" for p, why in summary.failed.items()))
    if summary.invalid:
        print(f"exported {len(summary.invalid)} point(s) that are not valid, each with its verdict in "
              f"{args.out / 'harness_verdicts.json'} (harness report and check --results read it and do not count "
              "them; a collector of bmk_agentic_*.json rows does not read it): "
              + "; ".join(f"{p} ({why})" for p, why in summary.invalid.items()))
    if summary.left_out:
        print(f"left out {len(summary.left_out)} point(s) that are not publishable (--include-unofficial exports "
              "them): " + ", ".join(str(p) for p in summary.left_out))
    return 0

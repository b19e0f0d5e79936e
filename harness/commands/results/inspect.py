"""`harness inspect POINT_DIR [--vs OTHER_POINT_DIR] [--out FILE]`: one point seen from inside: a self-contained
page that draws what the server, the client and the GPUs did on one clock, its JSON twin, and the findings that
say why the point reads as it does (printed here too)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("point_dir", type=Path, metavar="POINT_DIR",
                        help="a point's directory, e.g. runs/quickstart-sim/conc8")
    parser.add_argument("--vs", type=Path, metavar="OTHER_POINT_DIR",
                        help="a second point drawn on the same axes (c4 against c8; a point against its variant)")
    parser.add_argument("--out", type=Path, metavar="FILE",
                        help="the page to write (default POINT_DIR/inspect.html, or inspect_vs_<OTHER>.html); "
                             "the JSON twin is written beside it with the same name ending in .json")


def main(args: argparse.Namespace) -> int:
    from harness.inspect.write import inspect_points

    done = inspect_points(args.point_dir, args.vs, args.out)
    many = len(done.views) > 1
    for view in done.views:
        d = view.data
        state = d["state"] + ("" if d.get("valid") is not False else ", invalid")
        why = d.get("reason") or ", ".join(str(r) for r in d.get("invalid_reasons") or [])
        print(f"{view.label} ({'SIMULATED, ' if d.get('simulated') else ''}{state}{': ' + why if why else ''}):")
        if not view.findings:
            print("  no finding: no rule fired")
        for f in view.findings:
            print(f"  {f.kind}: {f.text} [{f.rule}; n={f.n}]")
        for key, reason in d["absent"].items():
            print(f"  not drawn: {key}: {reason}")
    if many and done.contrast:
        print(f"{done.views[0].label} vs {done.views[1].label}:")
        for line in done.contrast:
            print(f"  {line}")
    print(f"page: {done.html_path}")
    print(f"json: {done.json_path}")
    return 0

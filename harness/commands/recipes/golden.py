"""`harness golden list | show CURVE | lookup CURVE MODEL THINKING K`: the golden acceptance-length curves.

Curves are the YAML files of `golden_al_distribution/`; K is the draft length (EAGLE/NEXTN: the number of
speculative steps; DFLASH: block size - 1). Unknown curves, models, thinking modes and K are errors.
"""

from __future__ import annotations

import argparse
import json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="golden_command", metavar="ACTION", required=True)

    p = sub.add_parser("list", help="the golden curves and the models, thinking modes and K they cover")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("show", help="every value of one curve")
    p.add_argument("curve", help="curve name, e.g. musespark_dflash")
    p.add_argument("--json", action="store_true", help="print JSON")

    p = sub.add_parser("lookup", help="the golden AL for one model, thinking mode and draft length K")
    p.add_argument("curve", help="curve name, e.g. musespark_dflash")
    p.add_argument("model", help="model key, e.g. muse-spark-open-816b-a42b-nvfp4")
    p.add_argument("thinking", help="thinking_on or thinking_off")
    p.add_argument("k", type=int, help="draft length (EAGLE/NEXTN: num steps; DFLASH: block size - 1)")
    p.add_argument("--json", action="store_true", help="print JSON")


def main(args: argparse.Namespace) -> int:
    from harness.recipe import golden

    if args.golden_command == "list":
        curves = [golden.load_curve(name) for name in golden.list_curves()]
        if args.json:
            print(json.dumps([_curve_json(c) for c in curves], indent=2))
            return 0
        for curve in curves:
            for model_key, model in curve.models.items():
                cover = "; ".join(
                    f"{mode} k={','.join(str(k) for k in getattr(model, mode))}" for mode in model.modes()
                )
                print(f"{curve.name:<24} {model_key:<36} {cover}")
        return 0

    curve = golden.load_curve(args.curve)
    if args.golden_command == "show":
        if args.json:
            print(json.dumps(_curve_json(curve), indent=2))
            return 0
        print(f"# {curve.name} ({curve.source}); AL = accepted tokens per verify step incl. bonus")
        for model_key, model in curve.models.items():
            for mode in model.modes():
                cells = "  ".join(f"k={k}: {al:.2f}" for k, al in getattr(model, mode).items())
                print(f"{model_key:<36} {mode:<13} {cells}")
        return 0

    al = curve.lookup(args.model, args.thinking, args.k)
    if args.json:
        print(json.dumps({"curve": curve.name, "model": args.model, "thinking": args.thinking,
                          "k": args.k, "acceptance_length": al}))
    else:
        print(f"{al:.2f}")
    return 0


def _curve_json(curve: object) -> dict[str, object]:
    from harness.recipe.golden import GoldenCurve

    assert isinstance(curve, GoldenCurve)
    return {
        "name": curve.name,
        "source": curve.source,
        "models": {
            key: {mode: {str(k): al for k, al in getattr(model, mode).items()} for mode in model.modes()}
            for key, model in curve.models.items()
        },
    }

"""`harness regress --baseline SEL --candidate SEL [--tolerance 5%] [--correction holm|bh] [--markdown FILE]`: the
noise-aware regression gate (`harness.regress`). SEL is a run directory or a selection in the results store
(`harness.store.select`: `last=3,skip=1,tag=nightly`).

Exit status: 0 no regression (improvements and changes within noise or tolerance), 1 a regression, 4 not comparable
(different client versions, scenarios or engines, or no point in common), 2 a mistake in what was given.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.commands.results.ingest import add_db_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--baseline", required=True, metavar="SEL",
                        help="a run directory, or a store selection such as last=3,skip=1,tag=nightly (keys: run, "
                             "last, skip, tag, config, point, conc, host, variant, since, until)")
    parser.add_argument("--candidate", required=True, metavar="SEL", help="the same, for the side judged")
    parser.add_argument("--tolerance", type=_tolerance, default=5.0, metavar="PCT",
                        help="a change within PCT percent is never a regression (default 5%%)")
    parser.add_argument("--correction", choices=("holm", "bh"), default="holm",
                        help="family correction: Holm (default) or Benjamini-Hochberg")
    parser.add_argument("--allow-client-change", action="store_true",
                        help="compare points measured with different client versions")
    parser.add_argument("--allow-scenario-change", action="store_true",
                        help="compare points of different scenarios or engines (simulated vs real)")
    parser.add_argument("--allow-empty-baseline", action="store_true",
                        help="a baseline selection with no valid point yet (the first night) exits 0, saying so")
    parser.add_argument("--markdown", type=Path, metavar="FILE",
                        help="also write the calls as Markdown (the GitHub job summary: $GITHUB_STEP_SUMMARY)")
    add_db_argument(parser)


def _tolerance(text: str) -> float:
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a percentage such as 5%") from None
    if not 0 <= value < 1000:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a percentage from 0 to 1000")
    return value


def main(args: argparse.Namespace) -> int:
    from harness.artifacts import append_text, write_error
    from harness.errors import UserError
    from harness.regress.gate import gate
    from harness.regress.render import conclusion, markdown, text
    from harness.store.changes import changes
    from harness.store.db import Store, open_store
    from harness.store.location import resolve
    from harness.store.select import side

    store: Store | None = None
    try:
        if any(not Path(s).exists() for s in (args.baseline, args.candidate)):
            location = resolve(args.db)
            store = open_store(location) if location is not None else None
        base_name, base = side(args.baseline, store, baseline=True)
        cand_name, cand = side(args.candidate, store, baseline=False)
    finally:
        if store is not None:
            store.close()
    if not base and args.allow_empty_baseline and cand:
        line = f"gate: no baseline yet ({args.baseline} holds no completed valid point): nothing to judge"
        print(line)
        if args.markdown is not None:
            try:
                append_text(args.markdown, f"## Regression gate\n\n{line.removeprefix('gate: ')}\n")
            except OSError as exc:
                raise write_error(exc, args.markdown, "job summary") from None
        return 0
    if not base:
        raise UserError(f"--baseline {args.baseline}: no completed valid point there (failed and invalid points never "
                        "enter a baseline)")
    if not cand:
        raise UserError(f"--candidate {args.candidate}: no point there")
    allowed = {f for f, on in (("--allow-client-change", args.allow_client_change),
                               ("--allow-scenario-change", args.allow_scenario_change)) if on}
    result = gate(base, cand, tolerance_pct=args.tolerance, correction=args.correction, allowed=allowed)
    invalid = sorted({f"{e.config_key} c{e.conc} ({e.state}{'' if e.valid is not False else ', invalid'})"
                      for e in cand if not e.in_baseline})
    changed = changes([e for p in result.points for e in p.baseline] or base,
                      [e for p in result.points for e in p.candidate] or cand)
    out = text(result, base_name, cand_name, changed)
    if invalid:
        out = out.replace("\ngate:", f"\ncandidate points not judged (failed or invalid): {', '.join(invalid)}\n"
                                        "gate:", 1)
    print(out, end="")
    if args.markdown is not None:
        try:
            append_text(args.markdown, markdown(result, base_name, cand_name, changed) + "\n")
        except OSError as exc:
            raise write_error(exc, args.markdown, "job summary") from None
    return conclusion(result)[1]

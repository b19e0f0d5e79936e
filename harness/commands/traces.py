"""`harness traces synth|validate|stats|cap`: make, check, summarize and cap agentic trace corpora.

A corpus PATH is a directory of per-trace `*.json` files, a `.jsonl` file, one `.json` trace, or
`hf:OWNER/NAME@REVISION` for a Hugging Face dataset at a pinned revision (offline with HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.artifacts import print_json


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="traces_command", metavar="ACTION", required=True)

    p = sub.add_parser("synth", help="generate synthetic agentic sessions (deterministic for a seed)",
                       description="Generate synthetic agentic coding sessions in the Weka v1 format.")
    p.add_argument("--sessions", type=int, default=24, help="number of sessions (default 24)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--out", type=Path, required=True,
                   help="output directory of per-trace JSON files (or a .jsonl file)")
    p.add_argument("--max-context", type=int, default=None,
                   help="largest in + out of any request, tokens (default 12288)")
    p.add_argument("--turns", type=int, nargs=2, metavar=("MIN", "MAX"), default=None,
                   help="root requests per session (default 12 28)")
    p.add_argument("--subagent-probability", type=float, default=None,
                   help="chance that a tool call spawns subagents (default 0.1)")

    p = sub.add_parser("validate", help="check a corpus: schema, hash blocks, timing, AIPerf compatibility")
    p.add_argument("path", help="corpus path")
    p.add_argument("--hf-cache-dir", type=Path, default=None,
                   help="Hugging Face hub cache for hf: paths (default HF_HUB_CACHE, HF_HOME/hub)")
    p.add_argument("--strict", action="store_true",
                   help="treat warnings (AIPerf 0.13 incompatibilities) as errors")

    p = sub.add_parser("stats", help="corpus statistics: counts, ISL/OSL/think-time percentiles, cache hits")
    p.add_argument("path", help="corpus path")
    p.add_argument("--hf-cache-dir", type=Path, default=None,
                   help="Hugging Face hub cache for hf: paths (default HF_HUB_CACHE, HF_HOME/hub)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p = sub.add_parser("cap", help="drop requests with in + out above a cap, keeping relative timing")
    p.add_argument("path", help="corpus path")
    p.add_argument("--hf-cache-dir", type=Path, default=None,
                   help="Hugging Face hub cache for hf: paths (default HF_HUB_CACHE, HF_HOME/hub)")
    p.add_argument("--max-context", type=int, required=True, metavar="TOKENS", help="cap on in + out")
    p.add_argument("--out", type=Path, required=True,
                   help="output directory of per-trace JSON files (or a .jsonl file)")


def main(args: argparse.Namespace) -> int:
    action = args.traces_command
    if action == "synth":
        return _synth(args)
    if action == "validate":
        return _validate(args)
    if action == "stats":
        return _stats(args)
    return _cap(args)


def _synth(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from harness.errors import UserError, pydantic_error_line
    from harness.traces.files import write_corpus
    from harness.traces.synth import SynthConfig, synth_corpus

    fields: dict[str, object] = {"sessions": args.sessions, "seed": args.seed}
    if args.max_context is not None:
        fields["max_context"] = args.max_context
    if args.turns is not None:
        fields["turns"] = tuple(args.turns)
    if args.subagent_probability is not None:
        fields["subagent_probability"] = args.subagent_probability
    try:
        cfg = SynthConfig.model_validate(fields)
    except ValidationError as exc:
        raise UserError(pydantic_error_line("harness traces synth", exc)) from None
    corpus = synth_corpus(cfg)
    out = write_corpus(corpus, args.out)
    calls = sum(1 for t in corpus.traces for _ in _calls(t))
    print(f"wrote {len(corpus)} traces ({calls} requests) to {out}")
    return 0


def _calls(trace: object) -> list[object]:
    from harness.traces.schema import Trace, walk_calls

    assert isinstance(trace, Trace)
    return list(walk_calls(trace))


def _validate(args: argparse.Namespace) -> int:
    from harness.errors import UserError
    from harness.traces import load_corpus
    from harness.traces.validate import check_corpus

    corpus = load_corpus(args.path, cache_dir=args.hf_cache_dir)
    report = check_corpus(corpus)
    for line in report.warnings:
        print(f"warning: {line}", file=sys.stderr)
    if report.errors:
        for line in report.errors[1:]:
            print(f"error: {line}", file=sys.stderr)
        more = f" (and {len(report.errors) - 1} more)" if len(report.errors) > 1 else ""
        raise UserError(report.errors[0] + more)
    if args.strict and report.warnings:
        raise UserError(f"{args.path}: {len(report.warnings)} warning(s) with --strict")
    calls = sum(len(_calls(t)) for t in corpus.traces)
    print(f"ok: {len(corpus)} traces, {calls} requests in {args.path}")
    return 0


def _stats(args: argparse.Namespace) -> int:
    from harness.traces import corpus_stats, load_corpus
    from harness.traces.stats import render_table

    stats = corpus_stats(load_corpus(args.path, cache_dir=args.hf_cache_dir))
    if args.json:
        print_json(stats)
    else:
        print(render_table(stats))
    return 0


def _cap(args: argparse.Namespace) -> int:
    from harness.errors import UserError
    from harness.traces import load_corpus
    from harness.traces.cap import cap_corpus
    from harness.traces.files import write_corpus

    if args.max_context <= 0:
        raise UserError(f"harness traces cap: --max-context: expected a positive token count, got {args.max_context}")
    corpus = load_corpus(args.path, cache_dir=args.hf_cache_dir)
    capped, summary = cap_corpus(corpus, args.max_context)
    out = write_corpus(capped, args.out)
    print(f"wrote {len(capped)} traces to {out}: dropped {summary.dropped_requests} of "
          f"{summary.total_requests} requests, {summary.dropped_subagents} emptied subagent(s) and "
          f"{summary.dropped_traces} emptied trace(s) "
          f"above {args.max_context} tokens")
    return 0

"""`harness traces synth|validate|stats|cap|stage`: make, check, summarize, cap and stage agentic trace corpora.

`stage` puts the pinned AgentX corpus (`public-dataset:ALIAS@COMMIT`, `hf-weka-dataset:OWNER/NAME@COMMIT`, or
a recipe naming one) into a datasets cache that AIPerf reads offline on the compute nodes.

A corpus PATH is a directory of per-trace `*.json` files, a `.jsonl` file, one `.json` trace, or
`hf:OWNER/NAME@REVISION` for a Hugging Face dataset at a pinned revision (offline with HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.artifacts import print_json

OUT_HELP = ("output directory of per-trace JSON files (or a .jsonl file): a new or empty directory, or one "
            "the harness wrote before, whose old traces it replaces; it never removes or overwrites a file it did "
            "not write, and refuses a directory holding such files without its .harness-traces list")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="traces_command", metavar="ACTION", required=True)

    p = sub.add_parser("synth", help="generate synthetic agentic sessions (deterministic for a seed)",
                       description="Generate synthetic agentic coding sessions in the Weka v1 format.")
    p.add_argument("--sessions", type=int, default=24, help="number of sessions (default 24)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--out", type=Path, required=True,
                   help=OUT_HELP)
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
                   help="treat warnings (what the pinned AIPerf replays differently or rejects) as errors")

    p = sub.add_parser("stats", help="corpus statistics: counts, ISL/OSL/think-time percentiles, cache hits")
    p.add_argument("path", help="corpus path")
    p.add_argument("--hf-cache-dir", type=Path, default=None,
                   help="Hugging Face hub cache for hf: paths (default HF_HUB_CACHE, HF_HOME/hub)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")

    p = sub.add_parser("stage", help="stage the pinned AgentX corpus into a datasets cache for offline runs",
                       description="Download the pinned corpus at its commit (run where the Hugging Face hub is "
                                   "reachable) into a datasets cache on shared storage; jobs then read it offline.")
    p.add_argument("corpus", help="a pinned corpus spec (public-dataset:ALIAS@COMMIT or "
                                  "hf-weka-dataset:OWNER/NAME@COMMIT) or a recipe file that names one")
    p.add_argument("--to", type=Path, default=None, metavar="DIR",
                   help="the datasets cache to stage into (default: HF_DATASETS_CACHE, else HF_HOME/datasets); "
                        "give it to jobs as the cluster profile's corpus_cache or --corpus-cache")
    p.add_argument("--from-file", type=Path, default=None, metavar="FILE",
                   help="build it from a local copy of the dataset's JSON-lines file instead of downloading "
                        "(accepted as the pinned corpus only when its sha256 is the recorded one)")
    p.add_argument("--unverified", action="store_true",
                   help="with --from-file: accept other content as a stand-in (for tests); every result replayed "
                        "from it is marked not publishable")

    p = sub.add_parser("cap", help="drop requests with in + out above a cap, keeping relative timing")
    p.add_argument("path", help="corpus path")
    p.add_argument("--hf-cache-dir", type=Path, default=None,
                   help="Hugging Face hub cache for hf: paths (default HF_HUB_CACHE, HF_HOME/hub)")
    p.add_argument("--max-context", type=int, required=True, metavar="TOKENS", help="cap on in + out")
    p.add_argument("--out", type=Path, required=True,
                   help=OUT_HELP)


def main(args: argparse.Namespace) -> int:
    action = args.traces_command
    if action == "synth":
        return _synth(args)
    if action == "validate":
        return _validate(args)
    if action == "stats":
        return _stats(args)
    if action == "stage":
        return _stage(args)
    return _cap(args)


def _stage(args: argparse.Namespace) -> int:
    from harness.errors import UserError
    from harness.traces import pinned

    spec = args.corpus
    if not pinned.is_pinned_spec(spec):
        from harness.recipe.load import load_recipe

        if not Path(spec).is_file():
            raise UserError(f"{spec}: neither a pinned corpus spec (public-dataset:ALIAS@COMMIT) nor a recipe file")
        spec = load_recipe(spec).client.traces
        if not pinned.is_pinned_spec(spec):
            raise UserError(f"{args.corpus}: client.traces is {spec!r}, not a pinned corpus; nothing to stage")
    if args.unverified and args.from_file is None:
        raise UserError("--unverified goes with --from-file")
    corpus = pinned.parse_spec(spec)
    cache = args.to or pinned.default_cache()
    print(f"staging {corpus.repo}@{corpus.revision[:12]} into {cache} ...", flush=True)
    if args.from_file is not None:
        if not args.from_file.is_file():
            raise UserError(f"--from-file {args.from_file}: no such file")
        staged = pinned.stage_from_file(corpus, cache, args.from_file, allow_unverified=args.unverified)
    else:
        from harness.commands.recipes import hub

        what = f"{corpus.repo}@{corpus.revision[:12]}"
        hub.check_reachable(what, args.corpus)   # no network: one line in seconds, not the hub client's retries
        try:
            staged = pinned.stage_from_hub(corpus, cache)
        except OSError as exc:   # ConnectionError and the hub client's HTTP errors among them
            raise hub.network_error(what, args.corpus, exc) from None
    print(staged.message)
    if staged.ok:
        print(f"jobs read it offline with corpus_cache: {cache} (cluster profile) or --corpus-cache {cache}")
    return 0 if staged.ok else 1


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
        more = f" (and the {len(report.errors) - 1} above)" if len(report.errors) > 1 else ""
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

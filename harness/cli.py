"""The `harness` command line: a thin, lazily importing dispatcher.

Each subcommand lives in its own module under `harness/commands/` and exposes two functions:

    add_arguments(parser: argparse.ArgumentParser) -> None
    main(args: argparse.Namespace) -> int          # the process exit status

Only the module of the subcommand being run is imported, so `harness --help` stays instant.
No parser reads an abbreviated option (`--point` is not `--points`; `harness sim` alone reads SGLang's flags as
SGLang does): a misspelt or shortened subcommand or option is an argparse error that also names the closest valid
ones (`harness swep` -> did you mean 'sweep'?), and `--set KEY VALUE` is answered with `--set KEY=VALUE`. User errors raise `harness.errors.UserError` and become one line on
stderr with exit status 2;
`--debug` shows the traceback instead. Everything a command prints goes through `harness.artifacts` (stdout and
stderr are wrapped, line by line), so no secret reaches the terminal or a captured log.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import sys
import typing

# name -> (module, one-line help). Keep sorted by workflow, not alphabetically.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "sweep": ("harness.commands.running.sweep", "run every point of a recipe, one fresh server each, then report"),
    "run": ("harness.commands.running.run", "run one point of a recipe on one fresh server"),
    "search": ("harness.commands.running.search", "the highest concurrency that meets an SLO (agents per GPU, per kW)"),
    "eval": ("harness.commands.running.eval", "accuracy eval (lm-eval GSM8K) of a point's serving config, with its gate"),
    "plan": ("harness.commands.recipes.plan", "the exact server command, env, client and resources of every point"),
    "predict": ("harness.commands.recipes.predict", "each point's pool use, queueing, throughput and latency as the "
                "simulator predicts them, in seconds, without a run"),
    "diff": ("harness.commands.recipes.diff", "per-point changes between two versions of a recipe (paths or REV:path)"),
    "run-point": ("harness.commands.running.run_point", "run one point of a planned sweep (a Slurm array task)"),
    "submit": ("harness.commands.running.submit", "submit a recipe's points as one Slurm job array (--wait, --json)"),
    "status": ("harness.commands.running.status", "state, phase and exit code of each point of a submitted job"),
    "follow": ("harness.commands.running.follow", "follow a submitted job: live phases and log tails until it ends"),
    "cancel": ("harness.commands.running.cancel", "cancel a job this harness submitted"),
    "logs": ("harness.commands.running.logs", "logs of a submitted job, point by point"),
    "fingerprint": ("harness.commands.results.fingerprint", "compare two worker fingerprints: harness fingerprint diff A B"),
    "report": ("harness.commands.results.report", "curve tables, Pareto frontiers, plots and HTML from result files"),
    "sim": ("harness.commands.running.sim", "run the SGLang-compatible simulator (takes sglang.launch_server flags)"),
    "power": ("harness.commands.running.power", "sample GPU power with NVML, or integrate a power CSV over a window"),
    "inspect": ("harness.commands.results.inspect", "one point from inside: its timeline on one clock, where the time "
                "went, and findings in words (a self-contained page and its JSON twin)"),
    "compare": ("harness.commands.results.compare", "per point, old -> new between two runs of a curve"),
    "ingest": ("harness.commands.results.ingest", "store run directories in the results store (SQLite, or PostgreSQL "
               "by URL): one entry per point run"),
    "regress": ("harness.commands.results.regress", "noise-aware regression gate: baseline vs candidate per point "
                "and metric, family-corrected (exit 1 regression, 0 none, 4 not comparable)"),
    "history": ("harness.commands.results.history", "a metric of each point over time from the results store: "
                "table, PNG trend and HTML page, with each run's interval and its changes marked"),
    "export": ("harness.commands.results.export", "lay a run out as InferenceX artifacts: harness export --inferencex RUN_DIR OUT"),
    "traces": ("harness.commands.recipes.traces", "agentic trace corpora: synth, validate, stats, cap"),
    "golden": ("harness.commands.recipes.golden", "golden acceptance-length curves: list, show, lookup"),
    "flags": ("harness.commands.recipes.flags", "SGLang server flag tables: dump (inside the image), show"),
    "check": ("harness.commands.recipes.check", "review rules a recipe must pass (PASS/FAIL/WARN/N/A with evidence)"),
    "preflight": ("harness.commands.recipes.preflight", "check a recipe against a cluster before any GPU hour is spent"),
    "profile": ("harness.commands.recipes.profile", "check a cluster profile; --schema: its field reference and JSON Schema"),
    "changelog": ("harness.commands.recipes.changelog", "perf-changelog.yaml: validate (schema, append-only, bytes)"),
    "changed": ("harness.commands.recipes.changed", "config keys whose points differ from a base git revision"),
}


def _version() -> str:
    from harness import __version__

    return __version__


class _Parser(argparse.ArgumentParser):
    """An argument parser that reads no abbreviated option, and whose errors name the closest valid subcommand or
    option to a misspelt one. Subcommands' own subparsers are of this class too."""

    argv: list[str] = []       # the command line being parsed (set on the top-level parser's class)
    root: argparse.ArgumentParser | None = None

    def __init__(self, **kwargs: typing.Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(**kwargs)

    def error(self, message: str) -> typing.NoReturn:
        super().error(message + _hints(message, _Parser.argv, _Parser.root or self))


def _hints(message: str, argv: list[str], root: argparse.ArgumentParser) -> str:
    """`; did you mean …` for an invalid choice in `message`, and for each option on the command line that no
    parser on its path knows (argparse may report a missing argument before an unknown one)."""
    import re

    from harness.errors import did_you_mean

    hints = []
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        options = [c.strip().strip("'") for c in choice.group(2).split(",")]
        hints.append(did_you_mean(choice.group(1), options).strip(" ()"))
    known = _options_on_path(root, argv)
    for token in argv[: argv.index("--") if "--" in argv else len(argv)]:
        name = token.split("=", 1)[0]
        if name.startswith("-") and name != "-" and not re.fullmatch(r"-\d[\d.]*", name) and name not in known:
            hint = did_you_mean(name, known).strip(" ()")
            if hint:
                hints.append(f"{name}: {hint}")
    hints += _set_hints(argv)
    return "".join(f"; {h}" for h in hints if h)


def _set_hints(argv: list[str]) -> list[str]:
    """The one-token form of each `--set KEY VALUE` on the command line (a setting is one SETTING=VALUE token)."""
    return [f"--set takes one SETTING=VALUE argument; write --set {key}={value}"
            for flag, key, value in zip(argv, argv[1:], argv[2:])
            if flag == "--set" and "=" not in key and not key.startswith("-") and not value.startswith("-")]


def _options_on_path(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """The option strings of `parser` and of each subcommand parser `argv` names below it."""
    out = list(parser._option_string_actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = next((a for a in argv if a in action.choices), None)
            if chosen is not None:
                out += _options_on_path(action.choices[chosen], argv)
    return out


def _build_parser(argv: list[str]) -> tuple[argparse.ArgumentParser, object | None]:
    parser = _Parser(
        prog="harness",
        description="Agentic benchmark harness for LLM serving (SGLang + AIPerf).",
    )
    _Parser.argv, _Parser.root = argv, parser
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    chosen = next((a for a in argv if not a.startswith("-")), None)
    module = None
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        # `harness sim` takes sglang.launch_server's argv, whose prefixes SGLang's argparse reads.
        sp = sub.add_parser(name, help=help_text, description=help_text, allow_abbrev=name == "sim")
        if name == chosen:
            module = importlib.import_module(module_name)
            module.add_arguments(sp)
    return parser, module


def main(argv: list[str] | None = None) -> int:
    from harness.artifacts import RedactingStream

    out, err = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = RedactingStream(out), RedactingStream(err)
    try:
        return _main(argv)
    finally:
        for wrapped in (sys.stdout, sys.stderr):
            try:
                wrapped.flush()
            except (BrokenPipeError, ValueError):  # a closed pipe (`| head`) or stream
                pass
        sys.stdout, sys.stderr = out, err


# A full disk or quota, a read-only filesystem, a place the user may not write.
_WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)


def _main(argv: list[str] | None = None) -> int:
    from harness.errors import UserError, one_line

    argv = list(sys.argv[1:] if argv is None else argv)
    parser, module = _build_parser(argv)
    args = parser.parse_args(argv)
    if module is None:
        parser.print_help()
        return 2
    try:
        return int(module.main(args))  # type: ignore[attr-defined]
    except UserError as exc:
        if args.debug:
            raise
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {one_line(exc.hint)}", file=sys.stderr)
        return 2
    except OSError as exc:   # a write no command turned into its own line: one line naming the path and the cause
        if args.debug or exc.errno not in _WRITE_ERRNOS:
            raise
        where = exc.filename or exc.filename2 or "a file"
        print(f"error: {one_line(f'{where}: {exc.strerror or exc}')}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())

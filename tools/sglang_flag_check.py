"""Hold the harness's flag validator and the simulator's parser to SGLang's real argparse, value by value.

    python tools/sglang_flag_check.py 0.5.23 --wheel-dir /tmp/sglang-0.5.23   # or without: downloads the wheel

For a list of values that exercise each argparse type the tables record (sizes, integers, floats, choices,
lists, a store-const), it prints whether real SGLang, `harness.recipe.server_flags.flags.validate_args` and the simulator's
parser accept each; then it runs SGLang's own post-parse checks (`_handle_dflash`,
`validate_prefill_decode_interval`, `handle_cache_compatibility`, called on the real parser's namespace) against
`harness.recipe.postinit`, and parses every point's server argv of every shipped recipe (and of each GPU recipe
with DP attention and decode context parallelism switched on) with the real parser: no parse error, no flag the
release deprecates, no post-init rejection, and the attention-DP width the harness records. Exit status 1 on any
disagreement.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
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


DFLASH = ["--speculative-algorithm", "DFLASH", "--speculative-num-draft-tokens", "8"]
POST_INIT: list[tuple[list[str], str, str]] = [  # argv, module under sglang.srt.arg_groups, function
    (DFLASH, "speculative_hook", "_handle_dflash"),
    ([*DFLASH, "--speculative-draft-model-path", "d", "--pp-size", "2"], "speculative_hook", "_handle_dflash"),
    (["--prefill-decode-interval", "-1"], "validation_hook", "validate_prefill_decode_interval"),
    (["--prefill-decode-interval", "32"], "validation_hook", "validate_prefill_decode_interval"),
    (["--enable-hierarchical-cache", "--disable-radix-cache"], "kv_cache_hook", "handle_cache_compatibility"),
    (["--swa-full-tokens-ratio", "1.5"], "kv_cache_hook", "handle_cache_compatibility"),
    (["--swa-full-tokens-ratio", "0.3"], "kv_cache_hook", "handle_cache_compatibility"),
    (["--dcp-size", "0"], "parallel_hook", "handle_decode_context_parallelism"),
    (["--dcp-comm-backend", "a2a"], "parallel_hook", "handle_decode_context_parallelism"),
    (["--tp-size", "2", "--dcp-size", "2", "--enable-prefill-cp"], "parallel_hook",
     "handle_decode_context_parallelism"),
    (["--tp-size", "2", "--dcp-size", "2"], "parallel_hook", "handle_decode_context_parallelism"),
]


def _sglang_rejects(real: argparse.ArgumentParser, argv: list[str], module: str, function: str) -> str | None:
    """SGLang's own message for `argv` from one resolution step, or None when it accepts."""
    import importlib

    check = getattr(importlib.import_module(f"sglang.srt.arg_groups.{module}"), function)
    ns = real.parse_args(["--model-path", "m", *argv])
    ns.device = ns.device or "cuda"
    ns._resolved_overrides = []
    for _ in range(10):
        try:
            check(ns)
            return None
        except (ValueError, AssertionError) as exc:
            return str(exc)
        except AttributeError as exc:  # a private attribute full resolution sets first: the flag was given
            name = str(exc).rsplit("'", 2)[-2]
            setattr(ns, name, True)
    raise RuntimeError(f"{function} could not run on a parsed namespace")


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
    from harness.recipe.server_flags import flags
    from harness.sim.frontend.cli import build_parser

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
        from harness.recipe.postinit import post_init_errors

        for argv, module, function in POST_INIT:
            theirs = _sglang_rejects(real, argv, module, function)
            ours = post_init_errors(vars(real.parse_args(["--model-path", "m", *argv])), args.version)
            agree = (theirs is None and not ours) or (theirs is not None and theirs in ours)
            bad += not agree
            print(f"{' '.join(argv)}: sglang={theirs or 'accepts'} harness={ours[0] if ours else 'accepts'}"
                  f"{'' if agree else '  MISMATCH'}")
        parsed = 0
        for label, argv, point_args in _recipe_argvs(args.version):
            problems = _check_point(real, argv, point_args, args.version)
            parsed += 1
            bad += bool(problems)
            for problem in problems:
                print(f"{label}: {problem}  MISMATCH")
    print(f"sglang {args.version}: {parsed} recipe points parsed by the real parser; {bad} disagreements")
    return 1 if bad else 0


# Parallelism the recipes can ask for beyond what the shipped ones use: each is applied to every GPU recipe.
VARIANTS: list[list[str]] = [["parallelism.dp_attention=2"], ["parallelism.dcp=2"],
                             ["parallelism.dp_attention=2", "parallelism.dcp=2"]]


def _recipe_argvs(version: str) -> list[tuple[str, list[str], dict[str, Any]]]:
    """(label, SGLang argv, the plan's dashless args) of every point of every shipped recipe pinned to `version`,
    and of every GPU recipe's points with each of `VARIANTS`; a simulator point's argv stops at its own flags."""
    from harness.recipe.points import load_plans

    out: list[tuple[str, list[str], dict[str, Any]]] = []
    for path in sorted((ROOT / "recipes").glob("*.yaml")):
        recipe, _ = load_plans(path)
        for extra in [[], *([] if recipe.engine == "sim" else VARIANTS)]:
            _, plans = load_plans(path, overrides=[f"server.sglang_version={version}", *extra])
            for plan in plans:
                argv = plan.server.argv[3:]
                argv = argv[: argv.index("--sim-profile")] if "--sim-profile" in argv else argv
                out.append((f"{path.name}:{plan.name}{''.join(' ' + e for e in extra)}", argv,
                            dict(plan.settings["args"])))
    return out


def _check_point(real: argparse.ArgumentParser, argv: list[str], ours: dict[str, Any], version: str) -> list[str]:
    """What real SGLang says about one point's argv that the harness does not: a parse error, a deprecation
    warning, a post-init rejection (SGLang's own decode-context-parallel handler and `harness.recipe.postinit`
    on the real namespace), or an attention data-parallel width other than the one the harness records."""
    import logging

    from harness.recipe.postinit import post_init_errors
    from harness.recipe.server_flags.server_args import dp_attention_size

    warned: list[str] = []

    class Capture(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            warned.append(record.getMessage())

    log = logging.getLogger("sglang.srt.arg_groups.argparse_actions")
    handler = Capture()
    log.addHandler(handler)
    try:
        ns = real.parse_args(argv)
    except (SystemExit, argparse.ArgumentError) as exc:
        return [f"the real parser refuses it: {exc}"]
    finally:
        log.removeHandler(handler)
    problems = [f"deprecated in SGLang {version}: " + re.sub(r"\x1b\[[0-9;]*m", "", w) for w in warned]
    problems += [f"post-init: {e}" for e in post_init_errors(vars(ns), version)]
    dcp = _sglang_rejects(real, argv, "parallel_hook", "handle_decode_context_parallelism")
    problems += [] if dcp is None else [f"SGLang's handle_decode_context_parallelism: {dcp}"]
    attn = getattr(ns, "attn_dp_size", 1)
    width = attn if attn > 1 else (ns.dp_size if ns.enable_dp_attention else 1)
    if width != dp_attention_size(ours):
        problems.append(f"SGLang configures attention DP width {width}, the harness records {dp_attention_size(ours)}")
    return problems


if __name__ == "__main__":
    raise SystemExit(main())

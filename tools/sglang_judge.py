"""SGLang's own code judges every plan: each point of every shipped recipe, and of a variant grid, is parsed by
SGLang's real parser, built into SGLang's real `ServerArgs`, and run through SGLang's resolution hooks that need
no GPU and no model config; the reply is compared with the harness's fast copy (`harness.recipe.postinit`).

    python tools/sglang_judge.py 0.5.23 --wheel-dir DIR [--json]

DIR is an unpacked (or downloaded) sglang wheel of that version (`tools/sglang-cpu-setup.sh` unpacks 0.5.20 and
0.5.23 under `$HARNESS_SGLANG_HOME/wheels/VERSION`); without it the wheel is downloaded. SGLang's package
`__init__` is skipped and third-party modules that are not installed here are inert stand-ins (see
`tools/sglang_flag_table.py`): argument parsing, `ServerArgs.from_cli_args` and the hooks below are SGLang's code.

Hooks, in the order of SGLang's resolution pipeline (`arg_groups/pipeline.py`), each where the release has it:
`handle_deprecated_dp_attention`, `validate_prefill_decode_interval`, `handle_cache_compatibility`,
`handle_decode_context_parallelism`, `handle_hicache` (with `resolve_hicache_dcp_compatibility`),
`handle_data_parallelism`, `handle_context_parallelism`, `_handle_dflash` / `_handle_eagle_family`. The device is
`cuda` (what the GPU recipes run on). A hook that reads the model's config (`use_mla_backend`, `model_config_of`) or
a value that a model-bound hook resolves first stops there and the next hook runs; a point that SGLang then accepts
while the harness refuses it is left unjudged (counted), not a disagreement. Exit status 1 when any point's reply differs:
SGLang rejects and the harness plans it, or the harness rejects what SGLang accepts.

    python tools/sglang_judge.py 0.5.23 --wheel-dir DIR --argv-json FILE

judges the given server argvs instead (FILE, or `-` for stdin: a JSON list of {"label", "argv"}, argv without
`python3 -m sglang.launch_server`) and prints one JSON object per argv, in order: {"label", "sglang" (SGLang's
rejection or null), "sglang_rule" (the hook that raised, or `argparse` when SGLang's parser refuses the argv),
"needs_model" (the first hook that stopped on the model's config)}. Exit status 0 whatever the replies; `harness
check` runs this (rule `sglang-hooks`) in a process of its own, so SGLang's stand-ins never enter the harness.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import itertools
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sglang_flag_table import ROOT, real_parser, unpack_wheel  # noqa: E402

HOOKS: list[tuple[str, str]] = [   # (module under sglang.srt.arg_groups, function), pipeline order
    ("parallel_hook", "handle_deprecated_dp_attention"),
    ("validation_hook", "validate_prefill_decode_interval"),
    ("kv_cache_hook", "handle_cache_compatibility"),
    ("parallel_hook", "handle_decode_context_parallelism"),
    ("hicache_hook", "handle_hicache"),
    ("parallel_hook", "handle_data_parallelism"),
    ("parallel_hook", "handle_context_parallelism"),
]
SPEC_HOOKS = {"DFLASH": "_handle_dflash", "EAGLE": "_handle_eagle_family", "EAGLE3": "_handle_eagle_family",
              "NEXTN": "_handle_eagle_family"}
MODEL_READERS = ("use_mla_backend", "model_config_of")

# The variant grid applied to every shipped GPU recipe: DP attention 2/4, decode context parallelism 2, HiCache on,
# and their combinations (HiCache off is each recipe's own points without a kv_offload of their own).
GRID: list[list[str]] = [
    [*dp, *dcp, *hicache]
    for dp, dcp, hicache in itertools.product(
        [[], ["parallelism.dp_attention=2"], ["parallelism.dp_attention=4"]],
        [[], ["parallelism.dcp=2"]],
        [[], ["kv_offload.kind=dram", "kv_offload.hicache_size_gb=100"]],
    )
]


class NeedsModel(Exception):
    """A hook read the model's config, which is not here."""


@dataclass
class SGLangReply:
    label: str
    sglang: str | None          # SGLang's first rejection, or None
    sglang_rule: str | None     # the hook that raised
    needs_model: str | None     # the first hook that stopped early (the model's config, or what it resolves)
    harness: list[str]          # the fast copy's messages

    @property
    def agrees(self) -> bool:
        if self.sglang is None:   # a hook that stopped on the model's config leaves the rest unjudged
            return not self.harness or self.needs_model is not None
        return any(self.sglang.startswith(m) or m.startswith(self.sglang) for m in self.harness)


def _patch_model_readers() -> None:
    for name, module in list(sys.modules.items()):
        if not name.startswith("sglang.srt.arg_groups") or module is None:
            continue
        for reader in MODEL_READERS:
            if hasattr(module, reader):
                def refuse(*args: Any, _reader: str = reader, **kwargs: Any) -> Any:
                    raise NeedsModel(_reader)
                setattr(module, reader, refuse)


def _hook(module: str, function: str) -> Any:
    try:
        return getattr(importlib.import_module(f"sglang.srt.arg_groups.{module}"), function)
    except (ImportError, AttributeError):
        return None


def judge_argv(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[str | None, str | None, str | None]:
    """(SGLang's first rejection, the hook, the hook that needed the model) for one server argv."""
    server_args_mod = importlib.import_module("sglang.srt.server_args")
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            ns = parser.parse_args(argv)
    except (argparse.ArgumentError, SystemExit) as exc:   # SGLang's parser refuses the argv itself
        said = [line for line in err.getvalue().splitlines() if line.strip()]
        message = str(exc) if isinstance(exc, argparse.ArgumentError) else (said[-1] if said else "bad arguments")
        return message.split("error: ", 1)[-1], "argparse", None
    ns.device = ns.device or "cuda"
    args = server_args_mod.ServerArgs.from_cli_args(ns)
    args._resolved_overrides = []
    algo = str(getattr(args, "speculative_algorithm", None) or "").upper()
    hooks = [*HOOKS, *([("speculative_hook", SPEC_HOOKS[algo])] if algo in SPEC_HOOKS else [])]
    incomplete: str | None = None
    for module, function in hooks:
        hook = _hook(module, function)
        if hook is None:
            continue
        try:
            hook(args)
        except (ValueError, AssertionError, NotImplementedError) as exc:
            return str(exc) or type(exc).__name__, f"{module}.{function}", incomplete
        except NeedsModel as exc:   # the hook's checks after this read are left to the server
            incomplete = incomplete or f"{module}.{function} (reads {exc})"
        except (AttributeError, TypeError, KeyError) as exc:  # reads what an earlier, model-bound hook resolves
            incomplete = incomplete or f"{module}.{function} ({type(exc).__name__}: {exc})"
    return None, None, incomplete


def plans_of(version: str) -> list[tuple[str, list[str]]]:
    """(label, server argv without `python3 -m sglang.launch_server`) of every point of every shipped recipe,
    and of each GPU recipe's points under every `GRID` variant, pinned to `version`. The harness's own
    start-up rules are switched off while planning, so the argv of a point they refuse is judged too."""
    from harness.recipe import postinit
    from harness.recipe.points import load_plans

    keep = postinit.post_init_rejections
    postinit.post_init_rejections = lambda values, sglang_version="0.5.23": []  # type: ignore[assignment]
    out: list[tuple[str, list[str]]] = []
    try:
        for path in sorted((ROOT / "recipes").glob("*.yaml")):
            recipe, _ = load_plans(path)
            for extra in [[], *([] if recipe.engine == "sim" or recipe.hardware.gpu == "cpu" else GRID[1:])]:
                _, plans = load_plans(path, overrides=[f"server.sglang_version={version}", *extra])
                for plan in plans:
                    argv = plan.server.argv[3:]
                    argv = argv[: argv.index("--sim-profile")] if "--sim-profile" in argv else argv
                    out.append((f"{path.name}:{plan.name}{''.join(' ' + e for e in extra)}", argv))
    finally:
        postinit.post_init_rejections = keep  # type: ignore[assignment]
    return out


def load_sglang(package_root: Path) -> argparse.ArgumentParser:
    """SGLang's parser, with `ServerArgs` and the hooks imported and their model readers patched."""
    import logging

    logging.disable(logging.WARNING)   # SGLang logs every adjustment its hooks make
    parser = real_parser(package_root, exit_on_error=False)
    importlib.import_module("sglang.srt.server_args")
    for module, _ in HOOKS:
        with contextlib.suppress(ImportError):
            importlib.import_module(f"sglang.srt.arg_groups.{module}")
    with contextlib.suppress(ImportError):
        importlib.import_module("sglang.srt.arg_groups.speculative_hook")
    _patch_model_readers()
    return parser


def judge_given(package_root: Path, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """SGLang's reply to each {"label", "argv"}: {"label", "sglang", "sglang_rule", "needs_model"}."""
    parser = load_sglang(package_root)
    out = []
    for item in items:
        theirs, rule, needs = judge_argv(parser, [str(a) for a in item["argv"]])
        out.append({"label": item["label"], "sglang": theirs, "sglang_rule": rule, "needs_model": needs})
    return out


def judge(version: str, package_root: Path) -> list[SGLangReply]:
    from harness.recipe.postinit import post_init_errors

    parser = load_sglang(package_root)
    replies = []
    for label, argv in plans_of(version):
        theirs, rule, needs = judge_argv(parser, argv)
        with contextlib.redirect_stderr(io.StringIO()):
            values = vars(parser.parse_args(argv))
        replies.append(SGLangReply(label, theirs, rule, needs, post_init_errors(values, version)))
    return replies


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("version")
    ap.add_argument("--wheel-dir", type=Path, default=None)
    ap.add_argument("--json", action="store_true", help="one JSON object per point on stdout")
    ap.add_argument("--argv-json", default=None, metavar="FILE",
                    help="judge these argvs (a JSON list of {label, argv}; - for stdin) instead of the recipes")
    args = ap.parse_args()
    if args.argv_json is not None:
        text = sys.stdin.read() if args.argv_json == "-" else Path(args.argv_json).read_text()
        with tempfile.TemporaryDirectory(prefix="sglang-judge-") as tmp:
            given = judge_given(unpack_wheel(args.version, args.wheel_dir, Path(tmp)), json.loads(text))
        for row in given:
            print(json.dumps(row))
        return 0
    with tempfile.TemporaryDirectory(prefix="sglang-judge-") as tmp:
        replies = judge(args.version, unpack_wheel(args.version, args.wheel_dir, Path(tmp)))
    bad = [v for v in replies if not v.agrees]
    for v in replies:
        if args.json:
            print(json.dumps({"label": v.label, "sglang": v.sglang, "sglang_rule": v.sglang_rule,
                              "needs_model": v.needs_model, "harness": v.harness, "agrees": v.agrees}))
        elif not v.agrees:
            print(f"{v.label}: SGLang {args.version} says {v.sglang or 'accepts'}"
                  f"{f' ({v.sglang_rule})' if v.sglang_rule else ''}; harness says "
                  f"{v.harness[0] if v.harness else 'accepts'}  MISMATCH")
    rejected = sum(v.sglang is not None for v in replies)
    needs = sum(v.needs_model is not None for v in replies)
    print(f"sglang {args.version}: {len(replies)} points judged, {rejected} rejected by SGLang, {needs} stopped at "
          f"a hook that needs the model's config, {len(bad)} disagreements", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())

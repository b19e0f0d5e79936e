"""SGLang flag tables: argparse-faithful resolution, validation and argv rendering."""

from __future__ import annotations

import argparse
import contextlib
import io
from typing import Any

import pytest

from harness.errors import UserError
from harness.recipe.server_flags import flags

T23 = flags.load_table("0.5.23")
T20 = flags.load_table("0.5.20")
WHERE = "r.yaml: base.server_args"


def test_shipped_tables() -> None:
    assert flags.available_versions() == ["0.5.20", "0.5.23"]
    assert flags.load_table() is T23  # the pinned default, cached
    assert (T20.version, len(T20.flags)) == ("0.5.20", 494)
    assert (T23.version, len(T23.flags)) == ("0.5.23", 531)


def test_unknown_version() -> None:
    with pytest.raises(UserError) as exc:
        flags.load_table("0.4.0")
    assert str(exc.value) == "no SGLang flag table for version '0.4.0' (available: 0.5.20, 0.5.23)"


def test_flag_model_from_table() -> None:
    ep = T23.resolve("--ep-size")
    assert (ep.name, ep.aliases, ep.kind, ep.type, ep.default) == (
        "--ep-size", ("--expert-parallel-size", "--ep"), "value", "int", 1
    )
    hicache = T23.resolve("--enable-hierarchical-cache")
    assert (hicache.kind, hicache.aliases, hicache.default) == ("store_true", ("--enable-hicache",), False)
    tf32 = T23.resolve("--enable-tf32-matmul")
    assert (tf32.kind, tf32.negative) == ("boolean_optional", "--no-enable-tf32-matmul")
    policy = T23.resolve("--hicache-write-policy")
    assert policy.choices == ("write_back", "write_through", "write_through_selective")
    assert policy.default == "write_through"
    bs = T23.resolve("--cuda-graph-bs-decode")
    assert (bs.nargs, bs.takes_list) == ("+", True)


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("--tp-size", "--tp-size"),
        ("tp-size", "--tp-size"),
        ("--tensor-parallel-size", "--tp-size"),
        ("--tp", "--tp-size"),  # a prefix abbreviation, not a declared alias
        ("--ep", "--ep-size"),  # a declared alias that is also a prefix of --ep-size, --eplb-…
        ("--enable-hicache", "--enable-hierarchical-cache"),
        ("--cuda-graph-max-bs-d", "--cuda-graph-max-bs-decode"),
        ("--no-enable-tf32-matmul", "--enable-tf32-matmul"),
    ],
)
def test_resolve(name: str, canonical: str) -> None:
    assert T23.resolve(name).name == canonical


@pytest.mark.parametrize("table", [T20, T23], ids=["0.5.20", "0.5.23"])
def test_cuda_graph_max_bs_is_ambiguous(table: flags.FlagTable) -> None:
    with pytest.raises(UserError) as exc:
        table.resolve("--cuda-graph-max-bs")
    assert str(exc.value) == (
        f"--cuda-graph-max-bs: ambiguous in SGLang {table.version}: could match --cuda-graph-max-bs-decode, "
        "--cuda-graph-max-bs-prefill (write the full flag name)"
    )


def test_prefix_of_two_spellings_of_one_flag_is_still_ambiguous() -> None:
    with pytest.raises(UserError, match="could match --enable-hicache, --enable-hierarchical-cache, --enable-hisparse"):
        T23.resolve("--enable-hi")


def test_unknown_flag_suggests_close_spellings() -> None:
    with pytest.raises(UserError) as exc:
        T23.resolve("--stream-intervall")
    assert str(exc.value) == (
        "--stream-intervall: not a server flag of SGLang 0.5.23; did you mean --stream-interval or "
        "--scheduler-recv-interval or --mamba-track-interval?"
    )
    with pytest.raises(UserError) as exc:
        T23.resolve("--qqq-zzz")
    assert str(exc.value) == "--qqq-zzz: not a server flag of SGLang 0.5.23; no similar flag exists"


def test_value_inside_the_name_is_rejected() -> None:
    with pytest.raises(UserError, match="write the flag name alone"):
        T23.resolve("--tp-size=4")


def test_version_drift() -> None:
    assert T23.resolve("--prefill-decode-interval-min-bs").name == "--prefill-decode-interval-min-bs"
    with pytest.raises(UserError, match="not a server flag of SGLang 0.5.20"):
        T20.resolve("--prefill-decode-interval-min-bs")
    with pytest.raises(UserError, match="not a server flag of SGLang 0.5.23"):
        T23.resolve("--cuda-graph-tc-compiler")
    assert "marlin" in T20.resolve("--moe-runner-backend").choices  # type: ignore[operator]


def test_validate_args_canonicalises_and_converts() -> None:
    args = {
        "--tp": 4,
        "--ep": 4,
        "--quantization": "modelopt_fp4",
        "--swa-full-tokens-ratio": 0.3,
        "--hicache-size": "160",
        "--context-length": "128k",
        "--speculative-draft-model-revision": 46904162,
        "--enable-hicache": True,
        "--no-enable-tf32-matmul": True,
        "--cuda-graph-bs-decode": 8,
        "--default-chat-template-kwargs": {"enable_thinking": True},
        "--log-requests-level": "2",
    }
    assert flags.validate_args(T23, args, WHERE) == {
        "--tp-size": 4,
        "--ep-size": 4,
        "--quantization": "modelopt_fp4",
        "--swa-full-tokens-ratio": 0.3,
        "--hicache-size": 160,
        "--context-length": "128k",
        "--speculative-draft-model-revision": "46904162",
        "--enable-hierarchical-cache": True,
        "--enable-tf32-matmul": False,
        "--cuda-graph-bs-decode": [8],
        "--default-chat-template-kwargs": {"enable_thinking": True},
        "--log-requests-level": 2,
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"--hicache-write-policy": "writeback"},
         ("--hicache-write-policy: 'writeback' is not one of write_back, write_through, write_through_selective; "
         "did you mean write_back?")),
        ({"--moe-runner-backend": "marlinn"}, "--moe-runner-backend: 'marlinn' is not one of auto, deep_gemm"),
        ({"--log-requests-level": 5}, "--log-requests-level: 5 is not one of 0, 1, 2, 3"),
        ({"--tp-size": 4.5}, "--tp-size: expected an integer, got 4.5"),
        ({"--tp-size": "four"}, "--tp-size: expected an integer, got 'four'"),
        ({"--tp-size": True}, "--tp-size: expected an integer, got true"),
        ({"--tp-size": None}, "--tp-size: expected a value (remove the flag to leave it unset)"),
        ({"--swa-full-tokens-ratio": "x"}, "--swa-full-tokens-ratio: expected a number, got 'x'"),
        ({"--swa-full-tokens-ratio": float("nan")}, "--swa-full-tokens-ratio: expected a number, got nan"),
        ({"--enable-metrics": "yes"},
         "--enable-metrics: expected true or false (the flag takes no value), got 'yes'"),
        ({"--enable-metrics": 1}, "--enable-metrics: expected true or false (the flag takes no value), got 1"),
        ({"--served-model-name": 1.5}, "--served-model-name: expected a string, got 1.5 (quote it)"),
        ({"--served-model-name": ["a", "b"]}, "--served-model-name: expected a single value, got list"),
        ({"--cuda-graph-bs-decode": []}, "--cuda-graph-bs-decode: expected at least one value"),
        ({"--cuda-graph-bs-decode": [1, "x"]}, "--cuda-graph-bs-decode: expected an integer, got 'x'"),
        ({"--context-length": "lots"}, "--context-length: expected an integer or one with a size suffix"),
        ({"--context-length": "128K"}, "--context-length: expected an integer or one with a size suffix"),
        ({"--context-length": "1m"}, "--context-length: expected an integer or one with a size suffix"),
        ({"--context-length": "1.5Ki"}, "--context-length: expected an integer or one with a size suffix"),
        ({"--default-chat-template-kwargs": "{bad"},
         "--default-chat-template-kwargs: expected a JSON value, got text that is not JSON"),
        ({"--forward-hooks": {"a": 1}}, "--forward-hooks: expected a JSON list, got {'a': 1}"),
        ({"--tp-size": 4, "--tensor-parallel-size": 4},
         "--tensor-parallel-size: --tp-size is already given (as --tp-size); give it once"),
        ({"--enable-tf32-matmul": True, "--no-enable-tf32-matmul": True},
         "--no-enable-tf32-matmul: --enable-tf32-matmul is already given"),
        ({"--cuda-graph-max-bs": 3}, "--cuda-graph-max-bs: ambiguous in SGLang 0.5.23"),
        ({"--speculative-algo": "DFLASH", "--stream-interva": 20, "--streem-interval": 20},
         "--streem-interval: not a server flag of SGLang 0.5.23; did you mean --stream-interval"),
    ],
)
def test_validate_args_errors(args: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError) as exc:
        flags.validate_args(T23, args, WHERE)
    assert str(exc.value).startswith(f"{WHERE}.{message}")


def test_0520_table_records_types_and_nargs_like_sglangs_parser() -> None:
    # SGLang 0.5.20's argparse rejects a non-integer --max-running-requests and takes lists for nargs='+'
    with pytest.raises(UserError, match="--max-running-requests: expected an integer, got 'abc'"):
        flags.validate_args(T20, {"--max-running-requests": "abc"}, WHERE)
    with pytest.raises(UserError, match="--swa-full-tokens-ratio: expected a number, got 'x'"):
        flags.validate_args(T20, {"--swa-full-tokens-ratio": "x"}, WHERE)
    assert flags.validate_args(T20, {"--cuda-graph-bs-decode": [1, 2, 4], "--fuseep-mode": 2}, WHERE) == {
        "--cuda-graph-bs-decode": [1, 2, 4], "--fuseep-mode": 2}
    with pytest.raises(UserError, match=r"--fuseep-mode: 3 is not one of 1, 2"):
        flags.validate_args(T20, {"--fuseep-mode": 3}, WHERE)
    typed = [f for f in T20.flags if f.kind == "value" and f.type is None]
    assert typed == []  # every value-taking option of both tables has its type
    assert [f.name for f in T23.flags if f.kind == "value" and f.type is None] == ["--monokernel-backend"]


@pytest.mark.parametrize("version", ["0.5.20", "0.5.23"])
@pytest.mark.parametrize(("value", "number"), [
    ("131072", 131072), ("128k", 128_000), ("25.6k", 25_600), ("1M", 10**6), ("2G", 2 * 10**9), ("1T", 10**12),
    ("1Ki", 1024), ("128Ki", 131072), ("1Mi", 2**20), ("1Gi", 2**30), ("1Ti", 2**40),
])
def test_size_suffixes_as_sglang_parses_them(version: str, value: str, number: int) -> None:
    from harness.recipe.server_flags.flag_values import human_readable_int
    from harness.sim.frontend.cli import build_parser

    table = flags.load_table(version)
    assert flags.validate_args(table, {"--context-length": value}, WHERE) == {"--context-length": value}
    assert human_readable_int(value) == number
    assert build_parser(version).parse_args(["--context-length", value]).context_length == number


@pytest.mark.parametrize("value", ["128K", "1m", "1g", "1t", "1.5Ki", "1KI", "k", "12 k"])
def test_size_suffixes_sglang_rejects(value: str) -> None:
    from harness.sim.frontend.cli import build_parser

    with pytest.raises(UserError, match="--context-length: expected an integer or one with a size suffix"):
        flags.validate_args(T23, {"--context-length": value}, WHERE)
    with contextlib.redirect_stderr(io.StringIO()), pytest.raises(SystemExit):
        build_parser("0.5.23").parse_args(["--context-length", value])


def test_enable_amd_monokernel_and_its_deprecated_spelling_share_one_dest() -> None:
    flag = T23.resolve("--enable-amd-monokernel")
    assert (flag.dest, flag.kind) == ("enable_amd_monokernel", "store_true")
    old = T23.resolve("--monokernel-backend")
    assert (old.dest, old.choices) == ("enable_amd_monokernel", ("amd",))
    assert T20.get("--enable-amd-monokernel") is None


def test_render_argv() -> None:
    args = {
        "--tp": 4,
        "--ep-size": 4,
        "--quantization": "modelopt_fp4",
        "--moe-runner-backend": "flashinfer_trtllm",
        "--kv-cache-dtype": "fp8_e4m3",
        "--swa-full-tokens-ratio": 0.3,
        "--chunked-prefill-size": 8192,
        "--speculative-algorithm": "DFLASH",
        "--speculative-num-draft-tokens": 8,
        "--mm-feature-transport": "cpu",
        "--watchdog-timeout": 3600,
        "--stream-interval": 20,
        "--enable-metrics": True,
        "--disable-radix-cache": False,
        "--no-enable-tf32-matmul": True,
        "--cuda-graph-bs-decode": [1, 2, 4],
        "--default-chat-template-kwargs": {"enable_thinking": True},
    }
    assert flags.render_argv(T23, args) == [
        "--tp-size", "4", "--ep-size", "4", "--quantization", "modelopt_fp4",
        "--moe-runner-backend", "flashinfer_trtllm", "--kv-cache-dtype", "fp8_e4m3",
        "--swa-full-tokens-ratio", "0.3", "--chunked-prefill-size", "8192",
        "--speculative-algorithm", "DFLASH", "--speculative-num-draft-tokens", "8",
        "--mm-feature-transport", "cpu", "--watchdog-timeout", "3600", "--stream-interval", "20",
        "--enable-metrics", "--no-enable-tf32-matmul", "--cuda-graph-bs-decode", "1", "2", "4",
        "--default-chat-template-kwargs", '{"enable_thinking":true}',
    ]


def test_render_argv_rejects_what_validation_rejects() -> None:
    with pytest.raises(UserError, match="ambiguous"):
        flags.render_argv(T23, {"--cuda-graph-max-bs": 3})


def test_cli_show(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main as cli_main

    assert cli_main(["flags", "show", "ep"]) == 0
    assert capsys.readouterr().out == (
        "--ep-size  (SGLang 0.5.23, dest ep_size)\n"
        "  aliases: --expert-parallel-size, --ep\n"
        "  takes:   type int, nargs None\n"
        "  default: 1\n"
    )
    assert cli_main(["flags", "show", "cuda-graph-max-bs", "--sglang-version", "0.5.20"]) == 2
    assert "ambiguous in SGLang 0.5.20" in capsys.readouterr().err


def _argparse_oracle(table: flags.FlagTable) -> argparse.ArgumentParser:
    """A parser with the table's option strings, so Python's own argparse can arbitrate prefixes."""
    parser = argparse.ArgumentParser(usage="sglang", add_help=False, exit_on_error=False)
    for flag in table.flags:
        parser.add_argument(*flag.spellings, dest=flag.dest, action="store_true")
    return parser


def _argparse_pick(parser: argparse.ArgumentParser, prefix: str) -> str | None:
    """The dest argparse selects for `prefix`, or None when it reports an error (unknown or ambiguous)."""
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            parsed = parser._parse_optional(prefix)
    except (SystemExit, argparse.ArgumentError):
        return None
    if isinstance(parsed, list):  # Python >= 3.12.3 returns every candidate
        dests = {t[0].dest for t in parsed if t[0] is not None}
        return dests.pop() if len(parsed) == 1 and dests else None
    return None if parsed is None or parsed[0] is None else str(parsed[0].dest)


def test_prefix_resolution_agrees_with_argparse() -> None:
    parser = _argparse_oracle(T23)
    # One prefix per distinct candidate set (the shortest), which covers every outcome argparse can give.
    by_candidates: dict[tuple[str, ...], str] = {}
    for prefix in sorted({s[:n] for s in T23.option_strings for n in range(3, len(s) + 1)}, key=len):
        candidates = tuple(s for s in T23.option_strings if s.startswith(prefix))
        by_candidates.setdefault(candidates, prefix)
    for prefix in sorted({*by_candidates.values(), *T23.option_strings}):  # and every exact spelling
        theirs = _argparse_pick(parser, prefix)
        try:
            mine: str | None = T23.resolve(prefix).dest
        except UserError:
            mine = None
            # Stricter than argparse only where every candidate spelling belongs to one flag.
            if theirs is not None:
                assert {T23.resolve(s).dest for s in T23.option_strings if s.startswith(prefix)} == {theirs}
                continue
        assert mine == theirs, prefix

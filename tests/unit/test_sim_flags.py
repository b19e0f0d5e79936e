"""The simulator accepts exactly SGLang's launch flags (pinned table) plus --sim-*."""

from __future__ import annotations

import pytest

from harness.sim.batching.prompt import analyse, count_tokens, render_chat
from harness.sim.frontend.cli import build_parser

RECIPE_ARGV = [
    "--model-path", "/models/muse", "--served-model-name", "muse", "--host", "0.0.0.0", "--port", "30000",
    "--tp-size", "4", "--ep-size", "4", "--quantization", "modelopt_fp4", "--moe-runner-backend",
    "flashinfer_trtllm", "--kv-cache-dtype", "fp8_e4m3", "--swa-full-tokens-ratio", "0.3",
    "--chunked-prefill-size", "8192", "--speculative-algorithm", "DFLASH", "--speculative-draft-model-path",
    "RadixArk/Muse-Spark-Open-DFlash2", "--speculative-num-draft-tokens", "8", "--mm-feature-transport", "cpu",
    "--watchdog-timeout", "3600", "--stream-interval", "20", "--enable-metrics", "--enable-hierarchical-cache",
    "--hicache-size", "160", "--hicache-write-policy", "write_back", "--max-running-requests", "3",
    "--cuda-graph-max-bs-decode", "3", "--prefill-decode-interval", "96",
    "--speculative-draft-attention-backend", "fa4", "--enable-cache-report",
]


def test_recipe_argv_is_accepted() -> None:
    a = build_parser().parse_args(RECIPE_ARGV)
    assert a.tp_size == 4 and a.ep_size == 4 and a.hicache_size == 160
    assert a.hicache_write_policy == "write_back" and a.enable_hierarchical_cache is True
    assert a.speculative_num_draft_tokens == 8 and a.stream_interval == 20
    assert a.sim_profile == "demo"


def test_unknown_flag_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--no-such-flag", "1"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --no-such-flag" in capsys.readouterr().err


def test_ambiguous_prefix_exits_2_like_sglang_0523(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--cuda-graph-max-bs", "8"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "ambiguous option: --cuda-graph-max-bs could match" in err


def test_unique_prefix_abbreviation_and_aliases_work() -> None:
    a = build_parser().parse_args(["--tp", "8", "--ep", "8", "--enable-hicache", "--no-dllm-fdfo"])
    assert a.tp_size == 8 and a.ep_size == 8 and a.enable_hierarchical_cache and a.dllm_fdfo is False


def test_bad_choice_exits_2() -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["--hicache-write-policy", "write_sometimes"])
    assert exc.value.code == 2


def test_flag_removed_in_0523_is_rejected_but_accepted_by_0520() -> None:
    assert build_parser("0.5.20").parse_args(["--cuda-graph-tc-compiler", "eager"]) is not None
    with pytest.raises(SystemExit):
        build_parser("0.5.23").parse_args(["--cuda-graph-tc-compiler", "eager"])


def test_prompt_token_count_is_deterministic_bytes_over_four() -> None:
    data = render_chat([{"role": "user", "content": "a" * 100}])
    assert data == b"<|user|>\n" + b"a" * 100 + b"\n<|assistant|>\n"
    assert count_tokens(data) == -(-len(data) // 4) == 31
    p1 = analyse(render_chat([{"role": "user", "content": "x" * 900}]))
    p2 = analyse(render_chat([{"role": "user", "content": "x" * 900}, {"role": "assistant", "content": "y"}]))
    assert len(p1.block_hashes) == 3 and p1.block_hashes[:3] == p2.block_hashes[:3]


@pytest.mark.parametrize("version", ["0.5.20", "0.5.23"])
def test_recipe_argv_resolves_under_both_tables(version: str) -> None:
    # the 0.5.20 table once had no types: every value stayed a string and resolve() crashed with a TypeError
    from harness.sim.frontend.app import resolve

    a = build_parser(version).parse_args(RECIPE_ARGV)
    res = resolve(a, {"HARNESS_SIM_SGLANG_VERSION": version})
    assert (res.engine.max_running, res.spec.num_draft_tokens, res.engine.stream_interval) == (3, 8, 20)
    assert res.server_args["swa_full_tokens_ratio"] == 0.3 and res.sglang_version == version


def test_choices_are_enforced_on_every_choice_flag(capsys: pytest.CaptureFixture[str]) -> None:
    for value in ("bogus", "tc_piecewise"):  # a non-builtin argparse type (parse_cuda_graph_backend_arg)
        with pytest.raises(SystemExit):
            build_parser("0.5.23").parse_args(["--cuda-graph-backend-decode", value])
    assert build_parser("0.5.23").parse_args(["--cuda-graph-backend-decode", "full"]).cuda_graph_backend_decode == "full"
    assert build_parser("0.5.23").parse_args(["--monokernel-backend", "amd"]).enable_amd_monokernel is True


@pytest.mark.parametrize(("extra", "message"), [
    (["--swa-full-tokens-ratio", "1.5"], "--swa-full-tokens-ratio should be in range (0, 1.0]."),
    (["--prefill-decode-interval", "-1"], "--prefill-decode-interval must be non-negative."),
    (["--disable-radix-cache"], "enable-hierarchical-cache and disable-radix-cache are mutually exclusive"),
    (["--pp-size", "2"], "Currently DFLASH speculative decoding only supports pp_size == 1."),
    (["--enable-dp-attention", "--dp-size", "3", "--enable-dp-lm-head"], "DP attention needs tp_size divisible by dp_size"),
    (["--attn-dp-size", "2"], "DFLASH with dp attention requires --enable-dp-lm-head."),
    (["--dcp-size", "2"], "HiCache with --dcp-size > 1 only supports DSPARK speculative decoding"),
    (["--dcp-size", "0"], "Decode context parallel size (--dcp-size / --decode-context-parallel-size) must be >= 1"),
    (["--tp-size", "4", "--dcp-size", "3"], r"tensor_model_parallel_size (4) must be divisible by decode_context"),
    (["--tp-size", "2", "--dcp-size", "2", "--enable-prefill-cp"], "--dcp-size > 1 does not support --enable-prefill-cp."),
])
def test_sglang_post_init_rejections_stop_the_simulator(extra: list[str], message: str) -> None:
    from harness.sim.frontend.app import ServerArgsError, resolve

    with pytest.raises(ServerArgsError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        resolve(build_parser().parse_args([*RECIPE_ARGV, *extra]), {})


def test_dflash_without_draft_and_eagle_topk_without_steps_stop_the_simulator() -> None:
    from harness.sim.frontend.app import ServerArgsError, resolve

    argv = [a for a in RECIPE_ARGV if a != "RadixArk/Muse-Spark-Open-DFlash2" and a != "--speculative-draft-model-path"]
    with pytest.raises(ServerArgsError, match="requires setting --speculative-draft-model-path"):
        resolve(build_parser().parse_args(argv), {})
    eagle = ["--speculative-algorithm", "EAGLE", "--speculative-eagle-topk", "1"]
    with pytest.raises(ServerArgsError, match="without --speculative-num-steps"):
        resolve(build_parser().parse_args(eagle), {})


def test_server_info_version_follows_the_table_in_use() -> None:
    from harness.sim.frontend.app import resolve, server_info

    env = {"HARNESS_SIM_SGLANG_VERSION": "0.5.20"}
    res = resolve(build_parser("0.5.20").parse_args(RECIPE_ARGV), env)
    assert server_info(res, RECIPE_ARGV, env)["version"] == "0.5.20"


def test_dp_attention_and_dcp_are_accepted_as_sglangs_argparse_does() -> None:
    from harness.sim.frontend.app import pool_line, resolve

    plain = [a for a in RECIPE_ARGV if a not in ("--enable-hierarchical-cache",)]
    plain = plain[: plain.index("--hicache-size")] + plain[plain.index("--hicache-write-policy") + 2:]
    args = build_parser().parse_args([*plain, "--enable-dp-attention", "--dp-size", "2", "--dcp-size", "2",
                                      "--enable-dp-lm-head"])
    assert (args.enable_dp_attention, args.dp_size, args.dcp_size) == (True, 2, 2)
    line = pool_line(resolve(args, {}), args, "2026-01-01 00:00:00")
    assert line.startswith("[2026-01-01 00:00:00 DP0 TP0 EP0] max_total_num_tokens=")   # SGLang's scheduler prefix
    assert ", chunked_prefill_size=4096, max_prefill_tokens=" in line and line.endswith(" GB")  # 8192 / 2 ranks
    with pytest.raises(SystemExit):
        build_parser().parse_args([*RECIPE_ARGV, "--pcp-size", "2"])   # not a flag of the pinned SGLang


@pytest.mark.parametrize(("dp", "rank_running", "rank_chunk"), [(None, 24, 8192), ("2", 12, 4096), ("4", 6, 2048)])
def test_max_running_and_chunked_prefill_are_divided_per_attention_dp_rank(dp: str | None, rank_running: int,
                                                                           rank_chunk: int) -> None:
    # SGLang gives each attention-DP rank max(1, max_running // ranks) requests and chunk // ranks prefill tokens
    from harness.sim.frontend.app import resolve, server_info

    argv = ["--model-path", "m", "--tp-size", "4", "--max-running-requests", "24", "--chunked-prefill-size", "8192"]
    res = resolve(build_parser().parse_args([*argv, *(["--attn-dp-size", dp] if dp else [])]), {})
    info = server_info(res, argv, {})
    assert info["internal_states"][0]["effective_max_running_requests_per_dp"] == rank_running
    assert info["chunked_prefill_size"] == rank_chunk
    assert info["max_running_requests"] == 24
    assert res.engine.max_running == rank_running * (int(dp) if dp else 1)
    assert res.engine.chunked_prefill_size == rank_chunk * (int(dp) if dp else 1)

"""The simulator accepts exactly SGLang's launch flags (pinned table) plus --sim-*."""

from __future__ import annotations

import pytest

from harness.sim.cli import build_parser
from harness.sim.prompt import analyse, count_tokens, render_chat

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

"""Draft length per algorithm and the SGLANG_SIMULATE_ACC_* environment the harness injects."""

from __future__ import annotations

from typing import Any

import pytest

from harness.cli import main as cli_main
from harness.errors import UserError
from harness.recipe import golden

MUSE = "muse-spark-open-816b-a42b-nvfp4"
QWEN = "qwen3.5-397b-a17b-nvfp4"


@pytest.mark.parametrize("algorithm", ["EAGLE", "EAGLE3", "NEXTN", "MTP", "nextn", "Eagle"])
def test_eagle_family_draft_length_is_num_steps(algorithm: str) -> None:
    assert golden.draft_length(algorithm, {"--speculative-num-steps": 3, "--speculative-num-draft-tokens": 4}) == 3


@pytest.mark.parametrize(
    "args",
    [
        {"--speculative-num-draft-tokens": 8},
        {"--speculative-dflash-block-size": 8},
        {"--speculative-num-draft-tokens": 8, "--speculative-dflash-block-size": 8},
        {"speculative-num-draft-tokens": 8},
    ],
)
def test_dflash_draft_length_is_block_size_minus_one(args: dict[str, object]) -> None:
    assert golden.draft_length("DFLASH", args) == 7


def test_dflash_ignores_num_steps() -> None:
    assert golden.draft_length("dflash", {"--speculative-num-steps": 1, "--speculative-num-draft-tokens": 16}) == 15


def test_dspark_draft_length_is_its_block_size() -> None:
    assert golden.draft_length("DSPARK", {"--speculative-dspark-block-size": 7}) == 7
    assert golden.max_acceptance_length("DSPARK", {"speculative-dspark-block-size": 5}) == 6


@pytest.mark.parametrize(
    ("algorithm", "args", "message"),
    [
        ("EAGLE", {"--speculative-num-steps": True}, "--speculative-num-steps: EAGLE needs an integer, got True"),
        ("EAGLE", {"--speculative-num-steps": 3.0}, "--speculative-num-steps: EAGLE needs an integer, got 3.0"),
        ("NEXTN", {"--speculative-num-steps": "3"}, "--speculative-num-steps: NEXTN needs an integer, got '3'"),
        ("EAGLE", {"--speculative-num-steps": 0}, "--speculative-num-steps: 0 leaves no draft token (expected >= 1)"),
        ("EAGLE3", {}, "--speculative-num-steps: EAGLE3 needs an explicit value to pick the golden AL"),
        ("DFLASH", {"--speculative-num-draft-tokens": 1},
         "--speculative-num-draft-tokens: block size 1 leaves no draft token"),
        ("DFLASH", {"--speculative-dflash-block-size": 0},
         "--speculative-num-draft-tokens: block size 0 leaves no draft token"),
        ("DFLASH", {"--speculative-num-draft-tokens": 8.5},
         "--speculative-num-draft-tokens: DFLASH needs an integer, got 8.5"),
        ("DFLASH", {"--speculative-dflash-block-size": False},
         "--speculative-dflash-block-size: DFLASH needs an integer, got False"),
        ("DFLASH", {"--speculative-num-draft-tokens": 8, "--speculative-dflash-block-size": 16},
         "--speculative-num-draft-tokens 8 and --speculative-dflash-block-size 16 disagree"),
        ("DFLASH", {"--speculative-num-steps": 7}, "--speculative-num-draft-tokens: DFLASH needs an explicit block size"),
        ("DSPARK", {"--speculative-num-draft-tokens": 8},
         "--speculative-dspark-block-size: DSPARK needs an explicit block size >= 1 to pick the golden AL (got None)"),
        ("DSPARK", {"--speculative-dspark-block-size": 0}, "--speculative-dspark-block-size: DSPARK needs an explicit"),
        ("NGRAM", {"--speculative-num-draft-tokens": 8},
         "speculative algorithm 'NGRAM' has no golden draft-length rule (supported: EAGLE, EAGLE3, NEXTN, MTP, DFLASH, "
         "DSPARK)"),
    ],
)
def test_draft_length_rejections(algorithm: str, args: dict[str, object], message: str) -> None:
    with pytest.raises(UserError) as exc:
        golden.draft_length(algorithm, args)
    assert str(exc.value).startswith(message)


def _env(**overrides: Any) -> dict[str, str]:
    params: dict[str, Any] = {
        "algorithm": "DFLASH",
        "server_args": {"--speculative-num-draft-tokens": 8},
        "curve": "musespark_dflash",
        "model_key": MUSE,
        "thinking": "thinking_on",
        "mode": "perf",
    }
    params.update(overrides)
    return golden.acceptance_env(**params)


def test_musespark_dflash_point_gets_the_golden_env() -> None:
    assert _env() == {
        "SGLANG_SIMULATE_ACC_LEN": "4.05",
        "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
        "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token",
    }


def test_eagle_point_with_topk_one() -> None:
    env = _env(
        algorithm="NEXTN",
        server_args={"--speculative-num-steps": 2, "--speculative-eagle-topk": 1, "--speculative-num-draft-tokens": 3},
        curve="qwen3.5_mtp",
        model_key=QWEN,
        thinking="thinking_off",
    )
    assert env["SGLANG_SIMULATE_ACC_LEN"] == "2.70"  # always two decimals


def test_eval_mode_and_no_speculation_inject_nothing() -> None:
    assert _env(mode="eval") == {}
    assert _env(algorithm=None, server_args={}) == {}


def test_eval_mode_needs_no_golden_value() -> None:
    assert _env(mode="eval", curve="nope") == {}


@pytest.mark.parametrize("topk", [None, 2, 4])
def test_real_draft_token_needs_topk_one_for_eagle(topk: int | None) -> None:
    args: dict[str, object] = {"--speculative-num-steps": 3}
    if topk is not None:
        args["--speculative-eagle-topk"] = topk
    with pytest.raises(UserError) as exc:
        _env(algorithm="EAGLE", server_args=args, curve="qwen3.5_mtp", model_key=QWEN)
    got = "unset" if topk is None else str(topk)
    assert str(exc.value) == (
        "--speculative-eagle-topk: SGLANG_SIMULATE_ACC_TOKEN_MODE=real-draft-token needs "
        f"--speculative-eagle-topk 1 for EAGLE (got {got})"
    )


def test_fixed_token_mode_and_multinomial_are_allowed() -> None:
    env = _env(
        algorithm="EAGLE",
        server_args={"--speculative-num-steps": 4, "--speculative-eagle-topk": 4},
        curve="qwen3.5_mtp",
        model_key=QWEN,
        method="multinomial",
        token_mode="fixed",
    )
    assert env == {
        "SGLANG_SIMULATE_ACC_LEN": "3.97",
        "SGLANG_SIMULATE_ACC_METHOD": "multinomial",
        "SGLANG_SIMULATE_ACC_TOKEN_MODE": "fixed",
    }


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"method": "greedy"},
         "SGLANG_SIMULATE_ACC_METHOD must be one of match-expected, multinomial, got 'greedy'"),
        ({"token_mode": "real"},
         "SGLANG_SIMULATE_ACC_TOKEN_MODE must be one of fixed, real-draft-token, got 'real'"),
        ({"mode": "accuracy"}, "acceptance mode must be one of perf, eval, got 'accuracy'"),
        ({"server_args": {"--speculative-num-draft-tokens": 16}},
         f"golden curve musespark_dflash: no golden AL for {MUSE}/thinking_on/k=15"),
        ({"thinking": "thinking_off"}, f"golden curve musespark_dflash: {MUSE} has no thinking_off values"),
        ({"server_args": {}}, "--speculative-num-draft-tokens: DFLASH needs an explicit block size"),
    ],
)
def test_acceptance_env_rejections(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError) as exc:
        _env(**overrides)
    assert str(exc.value).startswith(message)


def test_recipe_acceptance_env_is_rejected() -> None:
    golden.check_no_recipe_acceptance_env({"SGLANG_TIMEOUT_KEEP_ALIVE": "900"}, "r.yaml: base.env")
    with pytest.raises(UserError) as exc:
        golden.check_no_recipe_acceptance_env(
            {"SGLANG_TIMEOUT_KEEP_ALIVE": "900", "SGLANG_SIMULATE_ACC_LEN": "4.05"}, "r.yaml: points.c24.env"
        )
    assert str(exc.value) == (
        "r.yaml: points.c24.env.SGLANG_SIMULATE_ACC_LEN: synthetic acceptance is set by the harness from the "
        "golden curve; remove it from the recipe"
    )


def test_cli_lookup_prints_the_golden_value(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["golden", "lookup", "musespark_dflash", MUSE, "thinking_on", "7"]) == 0
    assert capsys.readouterr().out == "4.05\n"


def test_cli_lookup_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["golden", "lookup", "qwen3.5_mtp", QWEN, "thinking_off", "2", "--json"]) == 0
    assert capsys.readouterr().out == (
        '{"curve": "qwen3.5_mtp", "model": "qwen3.5-397b-a17b-nvfp4", "thinking": "thinking_off", '
        '"k": 2, "acceptance_length": 2.7}\n'
    )


def test_cli_unknown_k_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["golden", "lookup", "musespark_dflash", MUSE, "thinking_on", "3"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: golden curve musespark_dflash: no golden AL for {MUSE}/thinking_on/k=3 (known k: 7); "
        "golden values are never interpolated\n"
    )


def test_cli_list_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["golden", "list"]) == 0
    out = capsys.readouterr().out
    assert f"musespark_dflash         {MUSE}      thinking_on k=7\n" in out
    assert cli_main(["golden", "show", "qwen3.5_mtp"]) == 0
    out = capsys.readouterr().out
    assert f"{QWEN:<36} thinking_off  k=1: 1.92  k=2: 2.70  k=3: 3.33  k=4: 3.83\n" in out

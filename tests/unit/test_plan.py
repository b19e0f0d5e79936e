"""Plans: argv rendering, golden injection, fingerprints, `--set` overrides and `harness plan` output."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main as cli
from harness.errors import UserError
from harness.recipe.load import expand_points, parse_recipe
from harness.recipe.plan import build_plan, fingerprint
from harness.recipe.points import apply_overrides, load_plans, parse_override

ROOT = Path(__file__).resolve().parents[2]
GB300 = ROOT / "recipes" / "musespark-fp4-gb300-sglang-agentic-dflash.yaml"
H200 = ROOT / "recipes" / "musespark-fp4-h200-sglang-agentic-dflash.yaml"

SPEC: dict[str, Any] = {
    "config_key": "t",
    "image": "lmsysorg/sglang:v0.5.23",
    "model": {"path": "org/m", "served_name": "m", "golden_key": "qwen3.5-397b-a17b-nvfp4",
              "chat_template": "checkpoint", "precision": "fp4"},
    "hardware": {"gpu": "h200", "gpus_per_node": 8},
    "parallelism": {"tp": 8, "ep": 8},
    "server": {"args": {"max-running-requests": 8}},
    "speculative": {"algorithm": "EAGLE", "num_steps": 3, "topk": 1, "num_draft_tokens": 4,
                    "golden": {"curve": "qwen3.5_mtp", "thinking": "thinking_off"}},
    "client": {"traces": "traces/x", "unofficial": True},
    "points": {"c4": {}, "c8": {"args": {"max-running-requests": 16}}},
}


def plans(raw: dict[str, Any]) -> dict[str, Any]:
    recipe = parse_recipe(raw, "r.yaml")
    return {p.name: build_plan(recipe, p, "r.yaml") for p in expand_points(recipe)}


def spec(**changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(SPEC)
    for key, value in changes.items():
        raw["speculative"][key] = value
    return raw


def arg(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


def test_argv_is_the_exact_sglang_command() -> None:
    p = plans(SPEC)["c8"]
    assert p.server.argv == [
        "python3", "-m", "sglang.launch_server", "--model-path", "org/m", "--served-model-name", "m",
        "--tp-size", "8", "--ep-size", "8", "--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", "--max-running-requests", "16",
        "--host", "127.0.0.1", "--port", "30000"]
    assert p.resources.model_dump() == {"gpu": "h200", "gpus_per_node": 8, "num_gpus": 8, "nodes": 1}
    assert p.settings["precision"] == "fp4"
    assert p.settings["args"]["tp-size"] == 8


def test_eagle_golden_injection_uses_num_steps() -> None:
    assert plans(SPEC)["c4"].server.env == {"SGLANG_SIMULATE_ACC_LEN": "3.33",
                                            "SGLANG_SIMULATE_ACC_METHOD": "match-expected",
                                            "SGLANG_SIMULATE_ACC_TOKEN_MODE": "real-draft-token"}


def test_eval_mode_injects_nothing() -> None:
    assert plans(spec(mode="eval"))["c4"].server.env == {}


def test_real_draft_token_needs_topk_1_for_eagle() -> None:
    with pytest.raises(UserError, match=r"r.yaml: points.c4: speculative.golden: --speculative-eagle-topk"):
        plans(spec(topk=4))


def test_unknown_golden_k_is_an_error_not_a_guess() -> None:
    with pytest.raises(UserError, match="no golden AL for qwen3.5-397b-a17b-nvfp4/thinking_off/k=6"):
        plans(spec(num_steps=6))


def test_unknown_curve() -> None:
    with pytest.raises(UserError, match="unknown golden curve 'nope'"):
        plans(spec(golden={"curve": "nope", "thinking": "thinking_on"}))


def test_eagle_without_num_steps_is_refused() -> None:
    with pytest.raises(UserError, match="without --speculative-num-steps: SGLang asserts"):
        plans(spec(num_steps=None))
    with pytest.raises(UserError, match="without --speculative-num-steps: SGLang asserts"):
        plans(spec(num_steps=None, mode="eval"))  # no golden lookup: SGLang's own assertion still applies


@pytest.mark.parametrize(("change", "message"), [
    ({"speculative": {"algorithm": "DFLASH", "num_draft_tokens": 8, "mode": "eval"}},
     "DFLASH speculative decoding requires setting --speculative-draft-model-path."),
    ({"speculative": {"algorithm": "DFLASH", "draft_model": "org/d", "num_draft_tokens": 8, "mode": "eval"},
      "parallelism": {"tp": 4, "pp": 2}},
     "Currently DFLASH speculative decoding only supports pp_size == 1."),
    ({"server": {"args": {"swa-full-tokens-ratio": 1.5}}}, "--swa-full-tokens-ratio should be in range (0, 1.0]."),
    ({"server": {"args": {"swa-full-tokens-ratio": 0}}}, "--swa-full-tokens-ratio should be in range (0, 1.0]."),
    ({"server": {"args": {"prefill-decode-interval": -1}}}, "--prefill-decode-interval must be non-negative."),
    ({"server": {"args": {"disable-radix-cache": True}},
      "kv_offload": {"kind": "dram", "hicache_size_gb": 100}},
     "enable-hierarchical-cache and disable-radix-cache are mutually exclusive"),
    ({"parallelism": {"tp": 8, "dp_attention": 3}}, "DP attention needs tp_size divisible by dp_size"),
    ({"server": {"args": {"dcp-comm-backend": "a2a"}}}, "--dcp-comm-backend a2a only affects the decode"),
    ({"server": {"args": {"dcp-replicate-q-proj": True}}}, "--dcp-replicate-q-proj requires --dcp-size > 1."),
    ({"server": {"args": {"attn-cp-size": 3}}}, "tp_size must be divisible by attn_cp_size"),
    ({"parallelism": {"tp": 8, "dp_attention": 4}, "server": {"args": {"attn-cp-size": 4}}},
     "tp_size must be divisible by dp_size * attn_cp_size"),
    ({"parallelism": {"tp": 8, "dcp": 3}},
     "tensor_model_parallel_size (8) must be divisible by decode_context_parallel_size (3)"),
    ({"parallelism": {"tp": 8, "dcp": 2}, "server": {"args": {"enable-prefill-cp": True}}},
     "--dcp-size > 1 does not support --enable-prefill-cp."),
])
def test_sglang_post_init_rejections_fail_the_plan(change: dict[str, Any], message: str) -> None:
    raw = copy.deepcopy(SPEC)
    for key, value in change.items():
        if key == "speculative":
            raw[key] = value
        elif key == "server":
            raw[key]["args"].update(value["args"])
        else:
            raw[key] = value
    with pytest.raises(UserError) as exc:
        plans(raw)
    assert "rejects this at startup (arg_groups/" in str(exc.value)
    assert message in str(exc.value)


def test_fingerprint_excludes_concurrency_and_is_stable() -> None:
    raw = copy.deepcopy(SPEC)
    raw["points"] = {"c4": {}, "c16": {}}
    p = plans(raw)
    assert p["c4"].fingerprint == p["c16"].fingerprint
    assert p["c4"].fingerprint == fingerprint(p["c4"].settings)
    assert len(p["c4"].fingerprint) == 64
    assert plans(SPEC)["c8"].fingerprint != p["c4"].fingerprint


def test_fingerprint_is_canonical_json_sha256() -> None:
    import hashlib

    assert fingerprint({"b": 1, "a": [1.5, "x"]}) == hashlib.sha256(b'{"a":[1.5,"x"],"b":1}').hexdigest()


def test_fingerprint_follows_image_and_settings() -> None:
    base = plans(SPEC)["c4"].fingerprint
    other = copy.deepcopy(SPEC)
    other["image"] = "lmsysorg/sglang:v0.5.22"
    assert plans(other)["c4"].fingerprint != base
    other = copy.deepcopy(SPEC)
    other["server"]["env"] = {"X": "1"}
    assert plans(other)["c4"].fingerprint != base


def test_chat_template_checkpoint_renders_no_flag_and_others_do() -> None:
    assert "--chat-template" not in plans(SPEC)["c4"].server.argv
    raw = copy.deepcopy(SPEC)
    raw["model"]["chat_template"] = "tmpl.jinja"
    assert arg(plans(raw)["c4"].server.argv, "--chat-template") == "tmpl.jinja"


def test_sim_engine_swaps_the_module_only() -> None:
    raw = copy.deepcopy(SPEC)
    raw["engine"] = "sim"
    real, sim = plans(SPEC)["c8"], plans(raw)["c8"]
    assert sim.server.argv[:3] == ["python3", "-m", "harness.sim"]
    assert sim.server.argv[3:-2] == real.server.argv[3:]
    assert sim.server.argv[-2:] == ["--sim-profile", "demo"]
    assert sim.server.env["HARNESS_SIM_SGLANG_VERSION"] == "0.5.23"


def test_parse_override() -> None:
    assert parse_override("args.hicache-size=160") == (["args", "hicache-size"], 160)
    assert parse_override("env.X=007") == (["env", "X"], "007")
    assert parse_override("server.args.speculative-eagle-topk=1") == (["server", "args", "speculative-eagle-topk"], 1)
    with pytest.raises(UserError, match="expected SETTING=VALUE"):
        parse_override("engine")


def test_set_routes_owned_flags_to_their_block() -> None:
    recipe = parse_recipe(copy.deepcopy(SPEC), "r.yaml")
    recipe2, points = apply_overrides(recipe, ["c4"], ["args.tp-size=4", "args.hicache-size=160",
                                                       "args.enable-hicache=true", "args.max-running=32"], "r.yaml")
    assert recipe2.parallelism.tp == 4
    assert [p.name for p in points] == ["c4"]
    assert points[0].kv_offload.model_dump() == {"kind": "dram", "hicache_size_gb": 160, "write_policy": None}
    assert points[0].args == {"max-running-requests": 32}


def test_set_unknown_recipe_key() -> None:
    recipe = parse_recipe(copy.deepcopy(SPEC), "r.yaml")
    with pytest.raises(UserError, match="clinet.duration_s is not a recipe setting \\(did you mean 'client'\\?\\)"):
        apply_overrides(recipe, None, ["clinet.duration_s=3"], "r.yaml")
    with pytest.raises(UserError, match="client.duraton_s is not a recipe setting \\(did you mean 'duration_s'\\?\\)"):
        apply_overrides(recipe, None, ["client.duraton_s=3"], "r.yaml")
    with pytest.raises(UserError, match="--port is set by the harness per launch"):
        apply_overrides(recipe, None, ["args.port=1"], "r.yaml")


def test_gb300_recipe_reproduces_the_curve() -> None:
    _, ps = load_plans(GB300)
    assert [p.conc for p in ps] == [1, 5, 8, 10, 15, 24, 28, 30, 34, 44, 48]
    by = {p.name: p.server.argv for p in ps}
    for p in ps:
        assert p.image == "lmsysorg/sglang:nightly-dev-20261021-c1c287a4"
        assert arg(p.server.argv, "--stream-interval") == "20"
        assert p.server.env["SGLANG_SIMULATE_ACC_LEN"] == "4.05"
        assert p.server.env["SGLANG_SIMULATE_ACC_METHOD"] == "match-expected"
        assert p.server.env["SGLANG_SIMULATE_ACC_TOKEN_MODE"] == "real-draft-token"
        assert p.server.env["SGLANG_TIMEOUT_KEEP_ALIVE"] == "900"
        assert arg(p.server.argv, "--tp-size") == "4" and arg(p.server.argv, "--ep-size") == "4"
        assert arg(p.server.argv, "--speculative-num-draft-tokens") == "8"
        assert arg(p.server.argv, "--speculative-draft-model-revision") == "46c90f41"
        hicache = "--enable-hierarchical-cache" in p.server.argv
        assert hicache == (p.conc >= 24)
    assert arg(by["c10"], "--max-running-requests") == "3" and arg(by["c10"], "--cuda-graph-max-bs-decode") == "3"
    assert arg(by["c24"], "--prefill-decode-interval") == "96"
    assert arg(by["c28"], "--prefill-decode-interval") == "32"
    assert arg(by["c30"], "--prefill-decode-interval") == "64"
    for name in ("c28", "c30", "c34"):
        assert arg(by[name], "--hicache-write-policy") == "write_back" and arg(by[name], "--hicache-size") == "160"
    assert arg(by["c24"], "--hicache-write-policy") == "write_through" and arg(by["c24"], "--hicache-size") == "120"
    for name in ("c5", "c10", "c15"):
        assert arg(by[name], "--speculative-draft-attention-backend") == "fa4"
    for name in ("c44", "c48"):
        assert arg(by[name], "--speculative-draft-attention-backend") == "trtllm_mha"
        assert arg(by[name], "--speculative-draft-kv-cache-dtype") == "fp8_e4m3"
        assert arg(by[name], "--hicache-write-policy") == "write_back"


def test_h200_recipe_is_a_nine_point_zip_with_marlin() -> None:
    _, ps = load_plans(H200)
    assert len(ps) == 9 and {1, 2, 4, 24, 48} <= {p.conc for p in ps}
    for p in ps:
        assert arg(p.server.argv, "--moe-runner-backend") == "marlin"
        assert arg(p.server.argv, "--tp-size") == "8" and arg(p.server.argv, "--ep-size") == "8"
        assert p.server.env["SGLANG_SIMULATE_ACC_LEN"] == "4.05"
        assert p.resources.num_gpus == 8


@pytest.mark.parametrize("path", [GB300, H200])
def test_shipped_recipes_plan_on_the_simulator(path: Path) -> None:
    """On the simulator a GPU recipe replays the pinned corpus at its own window, as on the GPU; a smoke run on
    the shipped synthetic corpus is refused unless marked unofficial."""
    _, ps = load_plans(path, ["c1"], ["engine=sim"])
    assert ps[0].server.argv[2] == "harness.sim"
    assert ps[0].client.traces.startswith("public-dataset:semianalysis_cc_traces_weka_062126@")
    assert ps[0].client.duration_s == 3600 and not ps[0].client.unofficial
    smoke = ["engine=sim", "client.traces=traces/quickstart"]
    with pytest.raises(UserError, match="refuses this run: --input-file .loader. local corpus .*--unofficial"):
        load_plans(path, ["c1"], smoke)
    _, ps = load_plans(path, ["c1"], smoke, unofficial=True)
    assert Path(ps[0].client.traces).is_dir() and ps[0].client.unofficial


def test_cli_plan_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["plan", str(GB300), "--point", "c28", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert list(doc) == ["config_key", "image", "points"]
    (point,) = doc["points"]
    assert list(point) == ["conc", "name", "fingerprint", "server", "client", "resources"]
    assert list(point["server"]) == ["argv", "env"]
    assert point["conc"] == 28 and point["name"] == "c28"


def test_cli_plan_text_and_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["plan", str(GB300), "--point", "10"]) == 0
    out = capsys.readouterr().out
    assert "== c10 (concurrency 10)" in out and "--max-running-requests 3" in out
    assert cli(["plan", "--schema"]) == 0
    schema = capsys.readouterr().out
    assert "| `speculative.golden.curve` |" in schema and "| `points.cN.extends` |" in schema


def test_cli_user_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(GB300.read_text().replace("stream-interval: 20", "stream-interval: twenty"))
    assert cli(["plan", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {bad}:") and "server.args.stream-interval: expected an integer" in err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("old,new,expected", [
    ("stream-interval: 20", "stream-intervall: 20",
     "server.args.stream-intervall: not a server flag of SGLang 0.5.23; did you mean --stream-interval"),
    ("moe-runner-backend: flashinfer_trtllm", "moe-runner-backend: flashinfer_trtlm",
     "server.args.moe-runner-backend: 'flashinfer_trtlm' is not one of"),
    ("chunked-prefill-size: 8192", "chunked-prefill-size: 8k",
     "server.args.chunked-prefill-size: expected an integer, got '8k'"),
    ("max-running-requests: 3\n", "cuda-graph-max-bs: 3\n",
     "points.c10.args.cuda-graph-max-bs: ambiguous in SGLang 0.5.23"),
    ("    extends: c24\n", "    extends: c30\n", "points.c28.extends: cycle c28 -> c30 -> c28"),
    ('SGLANG_TIMEOUT_KEEP_ALIVE: "900"', 'SGLANG_SIMULATE_ACC_LEN: "4.05"',
     "server.env.SGLANG_SIMULATE_ACC_LEN: synthetic acceptance is set by the harness from the golden curve"),
    ("num_draft_tokens: 8 ", "num_draft_tokens: 6 ",
     ("speculative.golden: golden curve musespark_dflash: no golden AL for "
      "muse-spark-open-816b-a42b-nvfp4/thinking_on/k=5")),
])
def test_cli_invalid_gb300_variants_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          old: str, new: str, expected: str) -> None:
    text = GB300.read_text()
    assert old in text
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace(old, new, 1))
    assert cli(["plan", str(bad)]) == 2
    err = capsys.readouterr().err
    assert expected in err and len(err.strip().splitlines()) == 1


def test_cli_zip_unequal_lengths_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(H200.read_text().replace("[2,     4,     8,     16,     24,     32,     48,    64,     96]\n",
                                            "[2, 4]\n", 1))
    assert cli(["plan", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "zip.args.max-running-requests: 2 values for 9 concurrencies" in err


def test_dcp_with_prefill_cp_is_refused_from_0_5_23_only() -> None:
    raw = copy.deepcopy(SPEC)
    raw["parallelism"] = {"tp": 8, "dcp": 2}
    raw["server"] = {**raw["server"], "args": {**raw["server"]["args"], "enable-prefill-cp": True},
                     "sglang_version": "0.5.20"}
    assert "--enable-prefill-cp" in plans(raw)["c4"].server.argv  # 0.5.20's handler has no such rejection


def test_dp_attention_size_reads_either_spelling() -> None:
    from harness.recipe.server_flags.server_args import dp_attention_size

    assert dp_attention_size({"attn-dp-size": 4}) == 4
    assert dp_attention_size({"enable-dp-attention": True, "dp-size": 4}) == 4
    assert dp_attention_size({"dp-size": 4}) == 1  # data-parallel replicas, not attention DP
    assert dp_attention_size({}) == 1


def test_parallelism_blocks_render_sglang_flags_and_count_gpus() -> None:
    raw = copy.deepcopy(SPEC)
    raw["parallelism"] = {"tp": 8, "ep": 8, "dp_attention": 8, "dcp": 4}
    raw["infmax_model_prefix"] = "qwen3.5"
    plan = plans(raw)["c4"]
    argv = " ".join(plan.server.argv)
    assert "--tp-size 8 --ep-size 8 --attn-dp-size 8 --dcp-size 4" in argv  # 0.5.23 deprecates the old pair
    assert "--enable-dp-attention" not in argv and "--dp-size" not in argv
    assert plan.resources.num_gpus == 8   # DP attention and DCP run inside tp
    raw["server"] = {**raw["server"], "sglang_version": "0.5.20"}  # no --attn-dp-size there
    assert "--ep-size 8 --enable-dp-attention --dp-size 8 --dcp-size 4" in " ".join(plans(raw)["c4"].server.argv)
    assert plan.model_prefix == "qwen3.5" and plan.settings["infmax_model_prefix"] == "qwen3.5"
    assert plans(SPEC)["c4"].model_prefix == "t" and "infmax_model_prefix" not in plans(SPEC)["c4"].settings


@pytest.mark.parametrize(("change", "message"), [
    ({"parallelism": {"tp": 4, "pcp": 2}},
     "parallelism.pcp: SGLang 0.5.23 has no --pcp-size flag (its prefill context parallelism is --attn-cp-size"),
    ({"parallelism": {"tp": 8, "pcp": 2}}, "parallelism.pcp: SGLang 0.5.23 has no --pcp-size flag"),
    ({"parallelism": {"tp": 8, "dp_attention": 1}}, "parallelism.dp_attention: Input should be greater than or"),
    ({"parallelism": {"tp": 8, "dcp": 0}}, "parallelism.dcp: Input should be greater than or equal to 1"),
    ({"server": {"args": {"dp-size": 2}}}, "server.args.dp-size: --dp-size comes from parallelism.dp_attention"),
    ({"server": {"args": {"enable-dp-attention": True}}}, "--enable-dp-attention comes from parallelism.dp_attention"),
    ({"server": {"args": {"attn-dp-size": 2}}}, "--attn-dp-size comes from parallelism.dp_attention"),
    ({"server": {"args": {"weight-version": "v1"}}}, "--weight-version comes from (set by the harness per launch)"),
    ({"server": {"args": {"decode-context-parallel-size": 2}}}, "--dcp-size comes from parallelism.dcp"),
    ({"infmax_model_prefix": "Muse Spark"}, "infmax_model_prefix: String should match pattern"),
])
def test_parallelism_and_prefix_refusals_are_one_line(change: dict[str, Any], message: str) -> None:
    raw = copy.deepcopy(SPEC)
    for key, value in change.items():
        if key == "server":
            raw[key]["args"].update(value["args"])
        else:
            raw[key] = value
    with pytest.raises(UserError) as exc:
        plans(raw)
    assert message in str(exc.value) and "\n" not in str(exc.value)

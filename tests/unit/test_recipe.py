"""Recipe schema, point names, inheritance, zip expansion, flag and env validation."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness.errors import UserError
from harness.recipe.load import expand_points, load_recipe, parse_recipe, parse_recipe_text, select_points

BASE: dict[str, Any] = {
    "config_key": "t",
    "image": "lmsysorg/sglang:v0.5.23",
    "model": {"path": "org/m", "served_name": "m"},
    "hardware": {"gpu": "h200", "gpus_per_node": 8},
    "server": {"args": {"stream-interval": 20, "max-running-requests": 8}, "env": {"A": "1"}},
    "client": {"traces": "traces/x"},
    "points": {"c1": {}},
}


def recipe(**changes: Any) -> dict[str, Any]:
    raw = copy.deepcopy(BASE)
    raw.update(changes)
    return raw


def text(raw: dict[str, Any]) -> str:
    return yaml.safe_dump(raw, sort_keys=False)


def error(raw: dict[str, Any] | str) -> str:
    with pytest.raises(UserError) as info:
        parse_recipe_text(raw if isinstance(raw, str) else text(raw), "r.yaml")
    return str(info.value)


def points(raw: dict[str, Any]) -> dict[str, Any]:
    return {p.name: p for p in expand_points(parse_recipe(raw, "r.yaml"))}


def test_point_keys_accept_c_prefix_and_bare_concurrency() -> None:
    pts = points(recipe(points={"c28": {}, 4: {}, "16": {}}))
    assert list(pts) == ["c4", "c16", "c28"]
    assert [p.conc for p in pts.values()] == [4, 16, 28]


def test_same_point_under_two_spellings_is_rejected() -> None:
    msg = error("config_key: t\nimage: i\nmodel: {path: p, served_name: m}\nhardware: {gpu: x, gpus_per_node: 1}\n"
                "client: {traces: t}\npoints:\n  28: {}\n  c28: {}\n")
    assert msg == "r.yaml:7: points.c28: given twice (again on line 8)"


@pytest.mark.parametrize("key", ["x28", "c0", "c-1"])
def test_bad_point_name(key: str) -> None:
    assert "point names are concurrencies" in error(recipe(points={key: {}}))


def test_unknown_top_level_key_names_file_line_and_path() -> None:
    raw = recipe()
    raw["servr"] = {}
    msg = error(raw)
    assert msg.startswith("r.yaml:") and "servr: unknown key 'servr' (did you mean 'server'?)" in msg


def test_a_misspelt_top_level_key_is_named_before_the_key_it_leaves_missing() -> None:
    raw = recipe()
    raw["clinet"] = raw.pop("client")
    assert error(raw) == ("r.yaml:17: clinet: unknown key 'clinet' (did you mean 'client'?) "
                          "(and 1 more: client: Field required)")


def test_a_misspelt_nested_key_names_the_closest_key_of_its_own_section() -> None:
    raw = recipe()
    raw["client"] = {**raw["client"], "duraton_s": 5}
    assert "client.duraton_s: unknown key 'duraton_s' (did you mean 'duration_s'?)" in error(raw)
    raw = recipe()
    raw["client"] = {**raw["client"], "zzz": 5}
    assert error(raw).endswith("client.zzz: unknown key 'zzz'")


def test_nested_schema_error_has_line_and_key_path() -> None:
    msg = error(recipe(parallelism={"tp": 0}))
    line = text(recipe(parallelism={"tp": 0})).splitlines().index("  tp: 0") + 1
    assert msg.startswith(f"r.yaml:{line}: parallelism.tp: Input should be greater than or equal to 1")


def test_extends_inherits_then_overrides_and_removes() -> None:
    pts = points(recipe(points={
        "c24": {"args": {"prefill-decode-interval": 96}, "env": {"B": "2"}},
        "c28": {"extends": "c24", "args": {"prefill-decode-interval": 32, "stream-interval": None},
                "env": {"A": None}},
    }))
    assert pts["c28"].args == {"max-running-requests": 8, "prefill-decode-interval": 32}
    assert pts["c28"].env == {"B": "2"}
    assert pts["c28"].extends_chain == ["c24"]
    assert pts["c24"].args["stream-interval"] == 20


def test_extends_chains_and_bare_reference() -> None:
    pts = points(recipe(points={"c1": {"args": {"max-running-requests": 2}}, "c2": {"extends": 1},
                                "c3": {"extends": "c2", "args": {"stream-interval": 5}}}))
    assert pts["c3"].extends_chain == ["c1", "c2"]
    assert pts["c3"].args == {"stream-interval": 5, "max-running-requests": 2}


def test_extends_cycle_is_rejected_and_named() -> None:
    msg = error(recipe(points={"c1": {"extends": "c3"}, "c2": {"extends": "c1"}, "c3": {"extends": "c2"}}))
    assert "points.c1.extends: cycle c1 -> c3 -> c2 -> c1" in msg


def test_self_extension_is_a_cycle() -> None:
    assert "cycle c1 -> c1" in error(recipe(points={"c1": {"extends": "c1"}}))


def test_extends_unknown_point() -> None:
    msg = error(recipe(points={"c1": {"extends": "c9"}}))
    assert "points.c1.extends: unknown point 'c9' (points: c1)" in msg


def test_zip_lines_up_values_index_by_index() -> None:
    pts = points(recipe(points={"c4": {"args": {"stream-interval": 1}}},
                        zip={"conc": [1, 2, 4], "args": {"max-running-requests": [2, 4, 8],
                                                         "cuda-graph-max-bs-decode": [1, 2, 3]},
                             "env": {"E": [10, 20, 30]}}))
    assert [p.name for p in pts.values()] == ["c1", "c2", "c4"]
    assert pts["c2"].args == {"stream-interval": 20, "max-running-requests": 4, "cuda-graph-max-bs-decode": 2}
    assert pts["c4"].args["stream-interval"] == 1  # a points: entry applies on top of its zip values
    assert pts["c4"].env == {"A": "1", "E": "30"}


def test_zip_unequal_lengths_rejected() -> None:
    msg = error(recipe(zip={"conc": [1, 2, 4], "args": {"max-running-requests": [2, 4]}}))
    assert "zip: Value error" not in msg
    assert "args.max-running-requests: 2 values for 3 concurrencies" in msg


def test_zip_repeated_concurrency_rejected() -> None:
    assert "each concurrency once" in error(recipe(zip={"conc": [1, 1]}))


def test_zip_args_are_flag_checked() -> None:
    msg = error(recipe(zip={"conc": [1], "args": {"max-runing-requests": [2]}}))
    assert "zip.args.max-runing-requests: not a server flag of SGLang 0.5.23; did you mean --max-running-requests" in msg


def test_unknown_flag_with_suggestion() -> None:
    msg = error(recipe(points={"c1": {"args": {"hicache-write-polcy": "write_back"}}}))
    assert "points.c1.args.hicache-write-polcy: not a server flag of SGLang 0.5.23; did you mean" in msg


def test_bad_choice_with_suggestion() -> None:
    msg = error(recipe(server={"args": {"moe-runner-backend": "marlinn"}}))
    assert "server.args.moe-runner-backend: 'marlinn' is not one of" in msg and "did you mean marlin?" in msg


def test_wrong_type() -> None:
    msg = error(recipe(server={"args": {"max-running-requests": "many"}}))
    assert "server.args.max-running-requests: expected an integer, got 'many'" in msg


def test_ambiguous_prefix_on_pinned_version() -> None:
    msg = error(recipe(server={"args": {"cuda-graph-max-bs": 8}}))
    assert "server.args.cuda-graph-max-bs: ambiguous in SGLang 0.5.23" in msg
    assert "--cuda-graph-max-bs-decode" in msg


def test_flags_are_stored_in_canonical_spelling() -> None:
    r = parse_recipe(recipe(server={"args": {"max-running": "8", "moe-data-parallel-size": 1, "no-dllm-fdfo": True,
                                             "enable-metrics": True}}))
    assert r.server.args == {"max-running-requests": 8, "moe-dp-size": 1, "dllm-fdfo": False, "enable-metrics": True}


def test_same_flag_twice_under_two_spellings() -> None:
    msg = error(recipe(server={"args": {"max-running-requests": 8, "max-running": 9}}))
    assert "server.args.max-running: --max-running-requests is already given" in msg


def test_dashed_flag_names_are_rejected() -> None:
    assert "write flag names without dashes: stream-interval" in error(recipe(server={"args": {"--stream-interval": 1}}))


@pytest.mark.parametrize("flag,where", [("tp-size", "parallelism.tp"), ("hicache-size", "kv_offload.hicache_size_gb"),
                                        ("enable-hicache", "kv_offload.kind"), ("port", "set by the harness")])
def test_flags_owned_by_a_block_are_rejected(flag: str, where: str) -> None:
    msg = error(recipe(points={"c1": {"args": {flag: 8 if flag != "enable-hicache" else True}}}))
    assert f"points.c1.args.{flag}:" in msg and where in msg


@pytest.mark.parametrize("level", ["server", "point", "zip"])
def test_recipe_provided_synthetic_acceptance_is_rejected(level: str) -> None:
    if level == "server":
        raw = recipe(server={"env": {"SGLANG_SIMULATE_ACC_LEN": "3.0"}})
    elif level == "point":
        raw = recipe(points={"c1": {"env": {"SGLANG_SIMULATE_ACC_METHOD": "multinomial"}}})
    else:
        raw = recipe(zip={"conc": [2], "env": {"SGLANG_SIMULATE_ACC_LEN": ["3"]}})
    assert "golden curve" in error(raw)


def test_env_numbers_become_text_and_booleans_are_rejected() -> None:
    assert parse_recipe(recipe(server={"env": {"K": 900}})).server.env == {"K": "900"}
    assert "quote 'true'" in error(recipe(server={"env": {"K": True}}))


def test_kv_offload_per_point_merges_with_inherited() -> None:
    pts = points(recipe(points={
        "c24": {"kv_offload": {"kind": "dram", "hicache_size_gb": 120, "write_policy": "write_through"}},
        "c28": {"extends": "c24", "kv_offload": {"write_policy": "write_back"}},
        "c30": {"extends": "c24", "kv_offload": {"kind": "none"}},
    }))
    assert pts["c28"].kv_offload.model_dump() == {"kind": "dram", "hicache_size_gb": 120, "write_policy": "write_back"}
    assert pts["c30"].kv_offload.kind == "none" and pts["c30"].kv_offload.hicache_size_gb is None


def test_kv_offload_settings_need_dram() -> None:
    assert "points.c1.kv_offload: hicache_size_gb and write_policy need kind: dram" in error(
        recipe(points={"c1": {"kv_offload": {"hicache_size_gb": 10}}}))


def test_golden_needs_model_key() -> None:
    raw = recipe(speculative={"algorithm": "DFLASH", "num_draft_tokens": 8,
                              "golden": {"curve": "musespark_dflash", "thinking": "thinking_on"}})
    assert "model.golden_key: needed to look up speculative.golden.curve" in error(raw)


def test_unknown_sglang_version() -> None:
    raw = recipe()
    raw["server"]["sglang_version"] = "0.4.0"
    assert "server.sglang_version: no flag table for SGLang 0.4.0" in error(raw)


def test_recipe_needs_a_point() -> None:
    assert "at least one point" in error(recipe(points={}))


def test_yaml_syntax_error_has_a_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("config_key: t\npoints: [\n")
    with pytest.raises(UserError, match=r"bad.yaml:\d+: not valid YAML"):
        load_recipe(f)


def test_missing_file() -> None:
    with pytest.raises(UserError, match="no such recipe file"):
        load_recipe("/nonexistent/r.yaml")


def test_select_points() -> None:
    pts = expand_points(parse_recipe(recipe(points={"c1": {}, "c8": {}, "c4": {}})))
    assert [p.name for p in select_points(pts, ["8", "c1"])] == ["c1", "c8"]
    assert [p.name for p in select_points(pts, ["c8,c1"])] == ["c1", "c8"]     # --points c8,c1
    with pytest.raises(UserError, match="no point c9"):
        select_points(pts, ["c9"])

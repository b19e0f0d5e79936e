"""Review rules that mechanize InferenceX code-owner checks: `publish-events` (Check 8), `forbidden-env` (Check 13),
`kv-offload-dram` (the KV-offload DRAM cap) and `dspark-verify-mode` (SGLang 0.5.23's DSpark worker at a golden AL).
Each fixture under tests/fixtures/check/ breaks one of them; `harness check` refuses it naming the rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.check.rules_review import allowed_dram_gb
from harness.cli import main as cli_main
from slurm.profile import HostDram

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "tests" / "fixtures" / "check"
GOOD = FIX / "good-dflash.yaml"


def rules(capsys: pytest.CaptureFixture[str], *args: str, rc: int) -> dict[str, Any]:
    assert cli_main(["check", *args, "--json"]) == rc
    (recipe,) = json.loads(capsys.readouterr().out)["recipes"]
    return {r["id"]: r for r in recipe["rules"]}


def evidence(rule: dict[str, Any]) -> str:
    return "; ".join(f["evidence"] for f in rule["findings"] if f["status"] == rule["status"])


@pytest.mark.parametrize("fixture, rule, check, words", [
    ("publish-events-false.yaml", "publish-events", "8",
     "c24: DYN_TRTLLM_PUBLISH_EVENTS_AND_METRICS=false disables event and metric publication; c28 (inherits from "
     "c24): DYN_TRTLLM_PUBLISH_EVENTS_AND_METRICS=false"),
    ("publish-events-arg.yaml", "publish-events", "8",
     "server.args.publish-events-and-metrics: not a server flag of SGLang 0.5.23"),
    ("nvfp4-nextn-moe-in-base.yaml", "forbidden-env", "13",
     "c28 (inherits from c24 ← base): SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1"),
    ("kv-dram-over-cap.yaml", "kv-offload-dram", "",
     "c28: --hicache-size 800 GB x 4 ranks = 3200 GB per server, over the allowed 3000 GB (the 3 TB cap"),
    ("dspark-no-static-verify.yaml", "dspark-verify-mode", "11",
     "c1, c5, c10, c24, c28: SGLANG_SIMULATE_ACC_LEN=4.05 with no SGLANG_RAGGED_VERIFY_MODE: SGLang's DSpark "
     "worker refuses it at start-up"),
])
def test_each_fixture_is_refused_naming_its_rule(capsys: pytest.CaptureFixture[str], fixture: str, rule: str,
                                                 check: str, words: str) -> None:
    got = rules(capsys, str(FIX / fixture), rc=1)
    assert got[rule]["status"] == "FAIL"
    assert words in evidence(got[rule])
    assert got[rule]["inferencex_check"] == (check or None)
    assert cli_main(["check", str(FIX / fixture)]) == 1
    assert f"  FAIL {rule} " in capsys.readouterr().out


def test_the_passing_fixture_passes_the_new_rules(capsys: pytest.CaptureFixture[str]) -> None:
    got = rules(capsys, str(GOOD), rc=0)
    assert got["publish-events"]["status"] == "PASS"
    assert got["dspark-verify-mode"]["status"] == "N/A"
    assert got["kv-offload-dram"]["status"] == "PASS"
    assert evidence(got["kv-offload-dram"]).startswith("c24: --hicache-size 120 GB x 4 ranks = 480 GB per server, "
                                                       "within 3000 GB")


def _variant(tmp_path: Path, old: str, new: str, source: Path = GOOD) -> Path:
    text = source.read_text()
    assert old in text
    path = tmp_path / "variant.yaml"
    path.write_text(text.replace(old, new))
    return path


def test_publication_left_on_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _variant(tmp_path, '"false"}', '"true"}', FIX / "publish-events-false.yaml")
    assert rules(capsys, str(path), rc=0)["publish-events"]["status"] == "PASS"


def test_dspark_with_the_static_verify_mode_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _variant(tmp_path, '    SGLANG_TIMEOUT_KEEP_ALIVE: "900"\n',
                    '    SGLANG_TIMEOUT_KEEP_ALIVE: "900"\n    SGLANG_RAGGED_VERIFY_MODE: static\n',
                    FIX / "dspark-no-static-verify.yaml")
    assert rules(capsys, str(path), rc=0)["dspark-verify-mode"]["status"] == "PASS"
    compact = _variant(tmp_path, '    SGLANG_TIMEOUT_KEEP_ALIVE: "900"\n',
                       '    SGLANG_TIMEOUT_KEEP_ALIVE: "900"\n    SGLANG_RAGGED_VERIFY_MODE: compact\n',
                       FIX / "dspark-no-static-verify.yaml")
    got = rules(capsys, str(compact), rc=1)["dspark-verify-mode"]
    assert "with SGLANG_RAGGED_VERIFY_MODE=compact (from c1 (inherits from base))" in evidence(got)


def test_the_cluster_profile_scales_the_dram_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _variant(tmp_path, "hicache_size_gb: 160}", "hicache_size_gb: 300}")
    assert rules(capsys, str(path), rc=0)["kv-offload-dram"]["status"] == "PASS"   # 1200 GB: under 3 TB
    got = rules(capsys, str(path), "--cluster", str(ROOT / "clusters" / "gb300.yaml"), rc=1)["kv-offload-dram"]
    assert evidence(got) == ("c28: --hicache-size 300 GB x 4 ranks = 1200 GB per server, over the allowed 960 GB "
                             "(4/4 GPUs of the server's 960 GB, nvl72)")


def test_a_size_given_as_a_ratio_cannot_be_checked_before_the_run(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = _variant(tmp_path, "    kv_offload: {write_policy: write_back, hicache_size_gb: 160}",
                    "    kv_offload: {kind: none}\n  c30:\n    kv_offload: {kind: dram}\n    args: {hicache-ratio: 3}")
    got = rules(capsys, str(path), rc=0)["kv-offload-dram"]
    assert got["status"] == "WARN"
    assert evidence(got).startswith("c30: host pool = --hicache-ratio 3 x the device KV pool, sized at start-up")


def test_a_cluster_profile_without_host_dram_is_an_input_error(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["check", str(GOOD), "--cluster", str(ROOT / "clusters" / "local-ci.yaml")]) == 2
    assert "has no host_dram" in capsys.readouterr().err


@pytest.mark.parametrize("host, used, per_node, allowed", [
    (None, 8, 8, 3000),                                   # no profile: the 3 TB cap alone
    (HostDram(gb=2000, system="hgx"), 8, 8, 2000),        # the whole server's DRAM
    (HostDram(gb=2000, system="hgx"), 4, 8, 1000),        # half the GPUs: half the DRAM
    (HostDram(gb=4000, system="hgx"), 8, 8, 3000),        # HGX: never above 3 TB
    (HostDram(gb=4000, system="nvl72"), 4, 4, 4000),      # NVL72: its standard DRAM
    (HostDram(gb=960, system="nvl72"), 2, 4, 480),
])
def test_allowed_dram(host: HostDram | None, used: int, per_node: int, allowed: float) -> None:
    assert allowed_dram_gb(host, used, per_node)[0] == allowed


def test_rules_list_names_the_inferencex_checks(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["check", "--rules"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "[InferenceX Check 13] SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE is prohibited by name" in lines["forbidden-env"]
    assert "[InferenceX Check 8] publish_events_and_metrics: false is prohibited" in lines["publish-events"]
    assert "[InferenceX Check 14 (estimate)] a pre-run estimate" in lines["min-points"]


def _disagg(tmp_path: Path, decode_env: str = "", prefill_kv: str = "") -> Path:
    """The shipped 1P1D example with settings of one role only (its trace path made absolute)."""
    text = (ROOT / "recipes" / "examples" / "disagg-gb300-1p1d-tp4-tp4-sim.yaml").read_text()
    text = text.replace("traces: ../traces/quickstart", f"traces: {ROOT / 'recipes' / 'traces' / 'quickstart'}")
    text = text.replace("  prefill:\n    workers: 1\n", "  prefill:\n    workers: 1\n" + prefill_kv)
    text = text.replace("      max-running-requests: 64\n", "      max-running-requests: 64\n" + decode_env, 1)
    path = tmp_path / "disagg.yaml"
    path.write_text(text)
    return path


def test_a_worker_role_setting_is_checked_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = ('    env:\n      SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE: "1"\n'
           '      DYN_TRTLLM_PUBLISH_EVENTS_AND_METRICS: "0"\n')
    got = rules(capsys, str(_disagg(tmp_path, decode_env=env)), rc=1)
    assert evidence(got["forbidden-env"]) == ("c4 (decode workers): SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1; "
                                              "c16 (decode workers): SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=1")
    assert evidence(got["publish-events"]).startswith("c4 (decode workers): DYN_TRTLLM_PUBLISH_EVENTS_AND_METRICS=0")


def test_the_dram_cap_is_counted_per_node_of_a_deployment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _disagg(tmp_path, prefill_kv="    kv_offload: {kind: dram, hicache_size_gb: 300}\n")
    got = rules(capsys, str(path), "--cluster", str(ROOT / "clusters" / "gb300.yaml"), rc=1)["kv-offload-dram"]
    assert evidence(got).startswith("c4 (node0): --hicache-size 300 GB x 4 ranks = 1200 GB per server, over the "
                                    "allowed 960 GB (4/4 GPUs of the server's 960 GB, nvl72)")
    assert rules(capsys, str(path), rc=0)["kv-offload-dram"]["status"] == "PASS"   # 1200 GB: under 3 TB

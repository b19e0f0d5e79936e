"""`harness check`'s `sglang-hooks` rule with SGLang's own code (the 0.5.23 wheel the tier unpacked): the GB300
recipe as shipped passes, and a copy whose HiCache point c34 adds `--enable-linker-mla-dedup` (which the harness's
fast rules plan, and SGLang's `handle_hicache` refuses without the Mooncake linker) fails naming c34 and the hook."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.sglang.conftest import ROOT, Tier, harness

GB300 = ROOT / "recipes" / "musespark-fp4-gb300-sglang-agentic-dflash.yaml"


def sglang_hooks(tier: Tier, recipe: Path) -> tuple[int, dict[str, Any], dict[str, Any]]:
    proc = harness({**tier.env(), "HARNESS_SGLANG_WHEELS": str(tier.wheels)}, "check", "--json", str(recipe))
    doc = json.loads(proc.stdout)
    (report,) = doc["recipes"]
    rules = {r["id"]: r for r in report["rules"]}
    return proc.returncode, rules["sglang-hooks"], rules


def test_the_shipped_gb300_recipe_is_accepted_by_sglang(sglang_tier: Tier) -> None:
    _, rule, _ = sglang_hooks(sglang_tier, GB300)
    assert rule["status"] == "PASS", rule
    (finding,) = rule["findings"]
    assert finding["evidence"].startswith("SGLang 0.5.23 accepts all 11 points")


def test_a_point_sglang_refuses_fails_naming_the_point(sglang_tier: Tier, tmp_path: Path) -> None:
    text = GB300.read_text()
    c34 = "      max-running-requests: 34                   # assumed\n"
    assert text.count(c34) == 1
    copy = tmp_path / "gb300-linker-dedup.yaml"
    copy.write_text(text.replace(c34, c34 + "      enable-linker-mla-dedup: true\n"))
    code, rule, rules = sglang_hooks(sglang_tier, copy)
    assert code == 1
    assert rules["plannable"]["status"] == "PASS"           # the fast rules plan it: only SGLang refuses it
    assert rule["status"] == "FAIL"
    assert rule["findings"] == [{
        "status": "FAIL", "point": "c34",
        "evidence": "c34: SGLang 0.5.23 refuses: --enable-linker-mla-dedup requires the Mooncake linker. "
                    "(hicache_hook.handle_hicache)",
    }]

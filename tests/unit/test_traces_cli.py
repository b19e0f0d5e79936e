"""`harness traces synth|validate|stats|cap` end to end, in process."""

import json
from pathlib import Path

import pytest

from harness.cli import main

HAND = Path(__file__).parents[1] / "fixtures" / "traces" / "hand"


def test_synth_validate_stats_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "corpus"
    assert main(["traces", "synth", "--sessions", "3", "--seed", "5", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [".harness-traces"] + [f"synth-s5-000{i}.json" for i in range(3)]
    assert main(["traces", "validate", str(out)]) == 0
    capsys.readouterr()
    assert main(["traces", "stats", str(out), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["traces"] == 3 and stats["theoretical_prefix_cache_hit"]["rate"] > 0.5
    assert main(["traces", "stats", str(out)]) == 0
    assert "theoretical hit" in capsys.readouterr().out
    capped = tmp_path / "capped.jsonl"
    assert main(["traces", "cap", str(out), "--max-context", "4000", "--out", str(capped)]) == 0
    assert main(["traces", "stats", str(capped), "--json"]) == 0
    assert json.loads(capsys.readouterr().out.split("\n", 1)[1])["context_tokens"]["max"] <= 4000


def test_malformed_trace_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = json.loads((HAND / "hand-a.json").read_text())
    raw["requests"][2]["requests"][0]["out"] = -3
    (tmp_path / "bad.json").write_text(json.dumps(raw))
    assert main(["traces", "validate", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert err.startswith(f"error: {tmp_path / 'bad.json'}: trace hand-a: requests[2].requests[0].out: ")


def test_validate_errors_and_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = json.loads((HAND / "hand-a.json").read_text())
    raw["hash_id_scope"] = "global"
    (tmp_path / "a.json").write_text(json.dumps(raw))
    assert main(["traces", "validate", str(tmp_path)]) == 0
    assert "hash_id_scope: 'global' is not supported by AIPerf 0.13" in capsys.readouterr().err
    assert main(["traces", "validate", "--strict", str(tmp_path)]) == 2
    raw["hash_id_scope"] = "local"
    raw["system_tokens"] = 200  # needs 4 blocks, the first call has 2
    (tmp_path / "a.json").write_text(json.dumps(raw))
    assert main(["traces", "validate", str(tmp_path)]) == 2
    assert "requests[0].hash_ids: first call of root has 2 blocks but its 200-token" in capsys.readouterr().err


def test_synth_rejects_bad_values(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["traces", "synth", "--sessions", "0", "--out", str(tmp_path / "x")]) == 2
    assert "sessions" in capsys.readouterr().err
    assert main(["traces", "cap", str(HAND), "--max-context", "0", "--out", str(tmp_path / "y")]) == 2

"""What the runner hands AIPerf: directories unchanged, other corpus forms converted once."""

import json
from pathlib import Path

from harness.point.replay.corpus_input import aiperf_corpus_dir

HAND = Path(__file__).resolve().parents[1] / "fixtures" / "traces" / "hand"


def test_a_directory_goes_in_unchanged(tmp_path):
    assert aiperf_corpus_dir(str(HAND), tmp_path) == (HAND, None)
    assert not (tmp_path / "corpora").exists()


def test_a_jsonl_file_is_written_as_a_directory_once(tmp_path):
    lines = [json.dumps(json.loads(p.read_text())) for p in sorted(HAND.glob("*.json"))]
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text("\n".join(lines) + "\n")
    out, note = aiperf_corpus_dir(str(jsonl), tmp_path / "cache")
    assert out.parent == tmp_path / "cache" / "corpora"
    assert sorted(p.name for p in out.glob("*.json")) == sorted(p.name for p in HAND.glob("*.json"))
    assert "weka_trace loader reads only such directories" in note
    assert aiperf_corpus_dir(str(jsonl), tmp_path / "cache")[0] == out

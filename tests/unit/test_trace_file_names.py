"""File names derived from trace ids: a short safe id names its file as it always did; a long one or one with
unsafe characters gets a readable prefix and a hash, so corpus conversion never fails with `File name too long`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.point.replay.corpus_input import aiperf_corpus_dir
from harness.traces.files import read_dir, read_local, trace_file_name

ROOT = Path(__file__).resolve().parents[2]
HAND = ROOT / "tests" / "fixtures" / "traces" / "hand"


def _jsonl_with_ids(tmp_path: Path, ids: list[str]) -> Path:
    base = json.loads(sorted(HAND.glob("*.json"))[0].read_text())
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps({**base, "id": i}) + "\n" for i in ids))
    return path


def test_short_safe_ids_keep_their_names():
    for trace_id in ("trace-0001", "synth-s0-0003", "a b", "ünïcode", "x" * 128):
        assert trace_file_name(trace_id) == f"{trace_id}.json"


def test_long_or_unsafe_ids_get_a_readable_prefix_and_a_hash():
    long_id = "session-" + "x" * 292
    name = trace_file_name(long_id)
    assert name.startswith("session-xxxx") and name.endswith(".json") and len(name.encode()) <= 80
    assert name != trace_file_name(long_id + "y")
    assert trace_file_name(long_id) == name                     # stable
    assert trace_file_name("a/b").startswith("a_b-")
    assert trace_file_name(".hidden").startswith("hidden-")
    assert trace_file_name("line\nbreak").startswith("line_break-")
    assert len(trace_file_name("é" * 200).encode()) <= 80


def test_a_300_character_id_validates_and_converts_and_aiperf_reads_the_id_back(tmp_path: Path):
    ids = ["t" * 300, "u" * 300, "short-one", "a/b"]
    jsonl = _jsonl_with_ids(tmp_path, ids)
    done = subprocess.run([sys.executable, "-m", "harness", "traces", "validate", str(jsonl)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("ok: 4 traces"), done.stdout + done.stderr
    out, _ = aiperf_corpus_dir(str(jsonl), tmp_path / "cache")
    names = sorted(p.name for p in out.glob("*.json"))
    assert "short-one.json" in names and len(names) == 4 and all(len(n) < 100 for n in names)
    assert sorted(t.id for t in read_dir(out).traces) == sorted(ids)
    assert sorted(t.id for t in read_local(out).traces) == sorted(ids)


def test_two_ids_that_would_share_a_file_are_refused(tmp_path: Path):
    other = trace_file_name("q" * 300)[: -len(".json")]       # a short id equal to the other's derived name
    jsonl = _jsonl_with_ids(tmp_path, ["q" * 300, other])
    with pytest.raises(UserError, match="is also the file name of trace"):
        aiperf_corpus_dir(str(jsonl), tmp_path / "cache")

"""The pinned corpus spec, its staged copy in a datasets cache, and what offline `datasets` reads from it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.traces import pinned
from tests.pinned_corpus import PINNED, staged_corpus

REV = PINNED.rsplit("@", 1)[1]


def test_specs_name_the_corpus_as_aiperf_does() -> None:
    c = pinned.parse_spec(PINNED)
    assert (c.repo, c.revision, c.aiperf_args()) == (
        "semianalysisai/cc-traces-weka-062126", REV, ["--public-dataset", "semianalysis_cc_traces_weka_062126"])
    h = pinned.parse_spec(f"hf-weka-dataset:semianalysisai/cc-traces-weka-062126@{REV}")
    assert h.aiperf_args() == ["--hf-weka-dataset", "semianalysisai/cc-traces-weka-062126"]
    for bad in (f"public-dataset:semianalysis_cc_traces_weka_062126@{REV[:12]}",  # a short hash does not pin
                f"public-dataset:no_such_alias@{REV}", f"hf-weka-dataset:noslash@{REV}"):
        with pytest.raises(UserError):
            pinned.parse_spec(bad)


def test_check_staged_wants_the_pinned_build_and_no_other(tmp_path: Path) -> None:
    corpus = pinned.parse_spec(PINNED)
    missing = pinned.check_staged(tmp_path / "empty", corpus)
    assert not missing.ok and f"harness traces stage {PINNED} --to {tmp_path / 'empty'}" in missing.message
    cache = staged_corpus(tmp_path / "cache")
    ok = pinned.check_staged(cache, corpus)
    assert ok.ok and not ok.verified and "UNVERIFIED" in ok.message
    other = pinned.build_dir(cache, corpus).parent / ("0" * 40)
    other.mkdir()
    stale = pinned.check_staged(cache, corpus)
    assert not stale.ok and "default/0.0.0/" + "0" * 40 in stale.message


def test_offline_datasets_reads_the_staged_build(tmp_path: Path) -> None:
    cache = staged_corpus(tmp_path / "cache")
    code = ("from datasets import load_dataset; "
            "ds = load_dataset('semianalysisai/cc-traces-weka-062126', split='train'); print(len(ds), ds[0]['id'])")
    env = {**os.environ, "HF_DATASETS_CACHE": str(cache), "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    count, first = out.stdout.split()
    assert int(count) == 24 and first.startswith("synth-")


def test_a_local_file_is_the_pinned_corpus_only_with_the_recorded_digest(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = pinned.parse_spec(PINNED)
    data = tmp_path / "traces.jsonl"
    data.write_text(json.dumps({"id": "t", "models": ["m"], "block_size": 64, "hash_id_scope": "local",
                                "requests": []}) + "\n")
    assert pinned.recorded_digest(corpus)["sha256"].startswith("29b6a19e")
    with pytest.raises(UserError, match="is not the pinned corpus"):
        pinned.stage_from_file(corpus, tmp_path / "c1", data, allow_unverified=False)
    digest = pinned._sha256(data)
    monkeypatch.setattr(pinned, "recorded_digest", lambda c: {"sha256": digest})
    staged = pinned.stage_from_file(corpus, tmp_path / "c2", data, allow_unverified=False)
    assert staged.ok and staged.verified and "the pinned corpus" in staged.message

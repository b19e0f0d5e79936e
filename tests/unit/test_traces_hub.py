"""Hugging Face corpora at a pinned revision, read from a local cache laid out like the hub's."""

from pathlib import Path

import pytest

from harness.errors import UserError
from harness.traces import load_corpus
from harness.traces.hub import parse_spec

HAND = Path(__file__).parents[1] / "fixtures" / "traces" / "hand"
SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture()
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A hub cache holding dataset acme/cc-traces at SHA (branch main points at it)."""
    repo = tmp_path / "hub" / "datasets--acme--cc-traces"
    snap = repo / "snapshots" / SHA / "data"
    snap.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(SHA)
    lines = [(HAND / f).read_text().replace("\n", "") for f in ("hand-a.json", "hand-b.json")]
    (snap / "traces.jsonl").write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_HOME", raising=False)
    return tmp_path / "hub"


def test_pinned_revision_from_cache_dir(hub_cache: Path) -> None:
    corpus = load_corpus(f"hf:acme/cc-traces@{SHA}", cache_dir=hub_cache)
    assert [t.id for t in corpus.traces] == ["hand-a", "hand-b"]
    assert corpus.source == f"hf:acme/cc-traces@{SHA}"


def test_branch_and_env_cache(hub_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HOME", str(hub_cache.parent))
    assert len(load_corpus("hf:acme/cc-traces@main")) == 2
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache))
    assert len(load_corpus("hf:acme/cc-traces@main")) == 2


def test_offline_unknown_revision_is_one_line_with_hint(hub_cache: Path) -> None:
    with pytest.raises(UserError) as info:
        load_corpus("hf:acme/cc-traces@" + "1" * 40, cache_dir=hub_cache)
    msg = str(info.value)
    assert "\n" not in msg and "offline (HF_HUB_OFFLINE=1)" in msg and "hf download --repo-type dataset" in msg


def test_spec_requires_revision() -> None:
    assert parse_spec("hf:acme/cc-traces@v1.0") == ("acme/cc-traces", "v1.0")
    with pytest.raises(UserError, match="a revision is required"):
        parse_spec("hf:acme/cc-traces")

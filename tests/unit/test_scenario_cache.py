"""AIPerf's resolution of a client command is kept per command, client version and what the command names."""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

import pytest

from harness.preflight import scenario_cache
from harness.recipe.scenario import Resolution, Violation

REFUSED = Resolution(False, None, [Violation("--benchmark-duration", "20 s", ">=900")], "refused")


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[list[str]]:
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(scenario_cache, "client_version", lambda: "agentx-harness 1.0.12")
    return []


def counting(calls: list[list[str]], answer: Resolution = REFUSED):
    def resolve(argv: list[str]) -> Resolution:
        calls.append(argv)
        return answer
    return resolve


def test_a_command_is_resolved_once_and_read_back_equal(calls: list[list[str]], tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.json").write_text("{}")
    for scratch in ("/tmp/hx-aiperf-check-1", "/tmp/hx-aiperf-check-2"):    # the scratch differs per call
        argv = ["--input-file", str(corpus), "--output-artifact-dir", f"{scratch}/artifacts"]
        assert scenario_cache.kept_resolve(argv, scratch, counting(calls)) == REFUSED
    assert len(calls) == 1
    (kept,) = (tmp_path / "cache" / "aiperf-resolutions").iterdir()
    assert json.loads(kept.read_text())["violations"][0]["required"] == ">=900"


def test_another_client_version_or_a_changed_corpus_is_resolved_again(calls: list[list[str]], tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    argv = ["--input-file", str(corpus)]
    scenario_cache.kept_resolve(argv, "/scratch", counting(calls))
    (corpus / "b.json").write_text("{}")
    scenario_cache.kept_resolve(argv, "/scratch", counting(calls))
    monkeypatch.setattr(scenario_cache, "client_version", lambda: "aiperf 0.13.0")
    scenario_cache.kept_resolve(argv, "/scratch", counting(calls))
    assert len(calls) == 3


def test_an_unreadable_cache_entry_is_resolved_again_and_an_unwritable_cache_is_not_used(
        calls: list[list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = ["--concurrency", "4"]
    scenario_cache.kept_resolve(argv, "/scratch", counting(calls))
    (kept,) = (tmp_path / "cache" / "aiperf-resolutions").iterdir()
    kept.write_text("{not json")
    assert scenario_cache.kept_resolve(argv, "/scratch", counting(calls)) == REFUSED
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(blocked))       # a file where the directory should be
    assert scenario_cache.kept_resolve(argv, "/scratch", counting(calls)) == REFUSED
    assert len(calls) == 3


def test_without_a_known_client_distribution_nothing_is_kept(calls: list[list[str]], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scenario_cache, "client_version", lambda: None)
    scenario_cache.kept_resolve([], "/scratch", counting(calls))
    scenario_cache.kept_resolve([], "/scratch", counting(calls))
    assert len(calls) == 2 and not (tmp_path / "cache").exists()


def test_the_installed_client_is_named() -> None:
    assert scenario_cache.client_version() == f"agentx-harness {metadata.version('agentx-harness')}"

"""`harness traces stage` without a network: one line naming the hub's host and the cause, within seconds."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.commands.recipes import hub

SPEC = "public-dataset:semianalysis_cc_traces_weka_062126@23f152f6f0f9399a85901b89a6458def0ef16729"


def _stage(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[int, list[str], float]:
    t0 = time.monotonic()
    status = main(["traces", "stage", SPEC, "--to", str(tmp_path / "cache")])
    return status, capsys.readouterr().err.splitlines(), time.monotonic() - t0


def test_a_refused_endpoint_is_one_line_at_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    status, err, took = _stage(capsys, tmp_path)
    assert status == 2 and took < 10
    assert err[0] == ("error: cannot stage semianalysisai/cc-traces-weka-062126@23f152f6f0f9 from the hub at "
                      "http://127.0.0.1:9: connecting to 127.0.0.1:9: Connection refused")
    assert err[1] == ("hint: stage it where the hub is reachable and copy the datasets cache here, or build it from "
                      f"a local copy of its JSON-lines file: harness traces stage {SPEC} --from-file FILE")
    assert len(err) == 2


def test_a_name_that_does_not_resolve_and_offline_mode_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    assert (hub.unreachable("https://no-such-host.invalid") or "").startswith("no-such-host.invalid does not resolve")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert hub.unreachable("https://huggingface.co") == "HF_HUB_OFFLINE is set"


def test_a_download_that_fails_on_the_network_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from harness.traces import pinned

    def refuse(corpus: object, cache: Path) -> object:
        raise ConnectionError("Couldn't reach 'semianalysisai/cc-traces-weka-062126' on the Hub (LocalEntryNotFound)")

    monkeypatch.setenv("HF_ENDPOINT", "https://hub.example")
    monkeypatch.setattr(hub, "unreachable", lambda url: None)
    monkeypatch.setattr(pinned, "stage_from_hub", refuse)
    status, err, _ = _stage(capsys, tmp_path)
    assert status == 2
    assert err[0] == ("error: cannot stage semianalysisai/cc-traces-weka-062126@23f152f6f0f9 from the hub at "
                      "https://hub.example: ConnectionError: Couldn't reach 'semianalysisai/cc-traces-weka-062126' "
                      "on the Hub (LocalEntryNotFound)")

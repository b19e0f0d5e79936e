"""Publishable: AIPerf's submission check (from a real AIPerf output) and our validity verdict, together."""

from __future__ import annotations

import json
from pathlib import Path

from harness.point.record import publishable

FIX = Path(__file__).resolve().parents[1] / "fixtures"
# written by AIPerf 0.13.0 for a 30 s quickstart point (--unsafe-override)
AIPERF_SUMMARY = FIX / "results" / "inferencex" / "inputs" / "sim_tp1_conc2" / "aiperf_artifacts" / \
    "profile_export_aiperf.json"


def record(**over: object) -> dict[str, object]:
    base: dict[str, object] = {
        "validity": {"valid": True, "reasons": []}, "simulated": False,
        "aiperf_submission": {"submission_valid": True, "submission_invalid_reasons": [],
                              "scenario": "inferencex-agentx-mvp"},
        "client": {"corpus": {"pinned": {"revision": "x"}, "verified": True}}}
    base.update(over)
    return base


def test_aiperf_submission_check_is_read_from_its_metadata() -> None:
    summary = json.loads(AIPERF_SUMMARY.read_text())
    assert "submission_valid" not in summary   # not at the top level: under metadata
    assert publishable.aiperf_submission(summary) == {
        "submission_valid": False, "submission_invalid_reasons": ["unsafe_override"],
        "scenario": "inferencex-agentx-mvp"}
    assert publishable.aiperf_submission({"metadata": {"scenario": "x"}}) is None
    assert publishable.aiperf_submission(None) is None


def test_labels_lead_with_aiperfs_reasons() -> None:
    assert publishable.assess(record()) == {"publishable": True, "reasons": [], "label": "publishable"}
    smoke = publishable.assess(record(aiperf_submission={"submission_valid": False,
                                                          "submission_invalid_reasons": ["unsafe_override"]},
                                       simulated=True))
    assert smoke["label"] == "unofficial (AIPerf: unsafe_override)"
    assert [r["code"] for r in smoke["reasons"]] == ["aiperf_unofficial", "simulated"]
    cancelled = publishable.assess(record(aiperf_submission={"submission_valid": False,
                                                              "submission_invalid_reasons": ["run_cancelled"]}))
    assert cancelled["label"] == "not publishable (AIPerf: run_cancelled)"
    stand_in = publishable.assess(record(client={"corpus": {"pinned": {}, "verified": False, "source": "s"}}))
    assert stand_in["label"] == "not publishable (corpus_unverified)"
    assert publishable.assess(record(validity={"valid": False}))["label"] == "not publishable (invalid)"
    assert publishable.assess(record(aiperf_submission=None))["label"] == "not publishable (no_aiperf_verdict)"


def test_a_warmup_budget_other_than_the_scenarios_is_not_published() -> None:
    corpus = {"pinned": {"revision": "x"}, "verified": True}
    preset = record(client={"corpus": corpus, "warmup_requests_per_lane": None})
    assert publishable.assess(preset)["publishable"] is True
    short = publishable.assess(record(client={"corpus": corpus, "warmup_requests_per_lane": 3}))
    assert short["label"] == "not publishable (warmup_not_preset)"
    assert short["reasons"][0]["message"] == "a warm-up budget of 3 calls per lane instead of the scenario's own"


def test_burst_starts_are_not_published() -> None:
    corpus = {"pinned": {"revision": "x"}, "verified": True}
    spaced = record(client={"corpus": corpus, "burst_phase_starts": False})
    assert publishable.assess(spaced)["publishable"] is True
    burst = publishable.assess(record(client={"corpus": corpus, "burst_phase_starts": True}))
    assert burst["label"] == "not publishable (burst_starts)"
    assert burst["reasons"][0]["message"] == "every lane started the window at once instead of at its recorded spacing"

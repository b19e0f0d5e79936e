"""Submission-grade AgentX runs: the shipped GPU recipes at their own window on the staged pinned corpus, a local
corpus refused before anything starts, and a smoke run labelled unofficial from its record to the export."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.pinned_corpus import PINNED, staged_corpus

from .conftest import group_gone, live_routers, port_listeners, wait_for_phase

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GPU_RECIPES = sorted((ROOT / "recipes").glob("musespark-*.yaml"))
DEPLOYMENT_EXAMPLE = ROOT / "recipes" / "examples" / "disagg-gb300-1p1d-tp4-tp4-sim.yaml"


def harness(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def wait_for_profiled_request(proc: subprocess.Popen[str], records: Path, within_s: float) -> None:
    """Until AIPerf has recorded a request of the profiling phase (without one it writes no summary at all)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if records.exists() and '"benchmark_phase":"profiling"' in records.read_text().replace(" ", ""):
            return
        time.sleep(0.5)
    proc.kill()
    pytest.fail("no profiling request was recorded")


@pytest.mark.parametrize("recipe", GPU_RECIPES, ids=[r.stem for r in GPU_RECIPES])
def test_gpu_recipe_at_its_own_window_reaches_profiling_on_the_staged_pinned_corpus(tmp_path, recipe):
    corpora = staged_corpus(tmp_path / "corpora")
    out = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", str(recipe), "--point", "c1",
                             "--set", "engine=sim", "--corpus-cache", str(corpora), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            cwd=ROOT)
    pdir = out / recipe.stem / "variants" / "engine=sim" / "conc1"
    wait_for_phase(proc, pdir / "status.json", "profiling", within_s=400)
    command = (pdir / "client_command.txt").read_text()
    assert "--public-dataset semianalysis_cc_traces_weka_062126" in command
    assert "--benchmark-duration 3600 " in command and "--unsafe-override" not in command
    assert f"HF_DATASETS_CACHE={corpora}" in command and "HF_HUB_OFFLINE=1" in command
    wait_for_profiled_request(proc, pdir / "aiperf" / "profile_export.jsonl", within_s=120)
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=120) == 130
    status = json.loads((pdir / "status.json").read_text())
    assert (status["state"], status["reason"]) == ("cancelled", "interrupted: SIGINT")
    assert group_gone(status["server_pid"]) and group_gone(status["client_pid"])
    record = json.loads((pdir / "point_result.json").read_text())
    submission = record["aiperf_submission"]   # AIPerf's own, from profile_export_aiperf.json's metadata
    assert submission["scenario"] == "agentx" and submission["submission_valid"] is False
    assert submission["submission_invalid_reasons"] == ["run_cancelled"]
    assert submission["dataset"]["loader"] == "semianalysis_cc_traces_weka_062126"
    assert submission["dataset"]["hf_dataset_name"] == "semianalysisai/cc-traces-weka-062126"
    corpus = record["client"]["corpus"]
    assert corpus["spec"] == PINNED and corpus["staged_cache"] == str(corpora) and corpus["verified"] is False
    codes = {r["code"] for r in record["publishable"]["reasons"]}
    assert codes == {"aiperf_unofficial", "invalid", "simulated", "corpus_unverified"}


def test_a_deployment_at_agentx_length_reaches_profiling_on_the_staged_pinned_corpus(tmp_path):
    """The shipped prefill/decode example behind the real router, at AgentX's 3600 s window on the pinned corpus
    (AIPerf's own resolver, no override): it profiles through the router, and a SIGINT ends it cancelled with
    every member stopped and none left."""
    corpora = staged_corpus(tmp_path / "corpora")
    out = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", str(DEPLOYMENT_EXAMPLE), "--point", "c4",
                             "--set", f"client.traces={PINNED}", "--set", "client.duration_s=3600",
                             "--set", "client.unofficial=false", "--corpus-cache", str(corpora), "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                            cwd=ROOT)
    variants = out / DEPLOYMENT_EXAMPLE.stem / "variants"
    deadline = time.monotonic() + 60
    while not list(variants.glob("*/conc4")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    (pdir,) = variants.glob("*/conc4")
    wait_for_phase(proc, pdir / "status.json", "profiling", within_s=400)
    command = (pdir / "client_command.txt").read_text()
    assert "--public-dataset semianalysis_cc_traces_weka_062126" in command
    assert "--benchmark-duration 3600 " in command and "--unsafe-override" not in command
    assert "--url http://127.0.0.1:30000 " in command   # the router
    wait_for_profiled_request(proc, pdir / "aiperf" / "profile_export.jsonl", within_s=120)
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=120) == 130
    status = json.loads((pdir / "status.json").read_text())
    assert (status["state"], status["reason"]) == ("cancelled", "interrupted: SIGINT")
    assert set(status["server_exit_codes"]) == {"router", "prefill_w0", "decode_w0"}
    assert all(group_gone(pid) for pid in status["server_pids"].values())
    assert port_listeners((30000, 30100, 30200)) == [] and live_routers() == []
    record = json.loads((pdir / "point_result.json").read_text())
    submission = record["aiperf_submission"]
    assert submission["scenario"] == "agentx" and submission["submission_invalid_reasons"] == ["run_cancelled"]
    assert record["client"]["corpus"]["spec"] == PINNED


@pytest.mark.parametrize("recipe", GPU_RECIPES, ids=[r.stem for r in GPU_RECIPES])
def test_a_local_corpus_without_unofficial_is_refused_before_any_server_starts(tmp_path, recipe):
    out = tmp_path / "runs"
    t0 = time.monotonic()
    done = harness("run", str(recipe), "--point", "c1", "--set", "engine=sim", "--set",
                   "client.traces=traces/quickstart", "--out", str(out))
    took = time.monotonic() - t0
    print(f"\nrefused in {took:.1f} s")
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "agentx scenario refuses this run" in line and "public-dataset:ALIAS@COMMIT" in line
    assert "--unofficial" in line
    assert not out.exists()          # nothing planned into the out dir, no server started
    assert took < 20                 # the bar is 5 s (measured 1.6 s here); the bound only catches a launch


def test_a_quickstart_point_is_unofficial_from_its_record_to_the_export(tmp_path):
    out = tmp_path / "runs"
    done = harness("run", "recipes/quickstart-sim.yaml", "--point", "c4", "--duration", "8", "--out", str(out),
                   "--set", "client.warmup_requests_per_lane=1")   # the labels are checked, not the window
    assert done.returncode in (0, 3), done.stdout + done.stderr    # valid or not: a loaded machine decides
    assert "; unofficial (AIPerf: unsafe_override)" in done.stdout
    pdir = out / "quickstart-sim" / "variants" / "warmup_requests_per_lane=1,duration_s=8" / "conc4"
    record = json.loads((pdir / "point_result.json").read_text())
    assert record["aiperf_submission"]["submission_invalid_reasons"] == ["unsafe_override"]
    assert record["client"]["aiperf_unsafe_override"] is True
    assert json.loads((pdir / "status.json").read_text())["publishable"] == "unofficial (AIPerf: unsafe_override)"
    status = harness("status", str(out))
    assert "[unofficial (AIPerf: unsafe_override)]" in status.stdout, status.stdout + status.stderr

    report = harness("report", str(out), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    for name in ("report.md", "report.html", "report.csv"):
        assert "unofficial (AIPerf: unsafe_override)" in (tmp_path / "report" / name).read_text(), name
    data = json.loads((tmp_path / "report" / "report.json").read_text())
    (point,) = data["curves"][0]["points"]
    assert (point["publishable"], point["publish_label"]) == (False, "unofficial (AIPerf: unsafe_override)")

    refused = harness("export", "--inferencex", str(out), str(tmp_path / "ix"))
    assert refused.returncode == 0 and "left out 1 point(s) that are not publishable" in refused.stdout
    assert not list((tmp_path / "ix").glob("bmk_agentic_*"))
    included = harness("export", "--inferencex", "--include-unofficial", str(out), str(tmp_path / "ix"))
    assert included.returncode == 0 and len(list((tmp_path / "ix").glob("bmk_agentic_*"))) == 1

    check = harness("check", "recipes/quickstart-sim.yaml", "--results", str(out))
    assert "N/A  publishable" in check.stdout and "not meant for publishing" in check.stdout

"""`harness search` on the simulator, as its docs give it: the quick start's recipe, ttft_p90<=0.5 over c1..c8
with 30 s windows, every lane starting the window at once and one warm-up call per lane, within 4 tests
(`--max-points`; about four minutes here). search.json is checked against the tested points' own records (`point_result.json`): every
test's outcome, recomputed from its record by the rules of docs/search.md, and the answer: a boundary whose own
record passes with a failing record just above it (or the upper bound reached), or an answer marked uncertain whose
interval holds only inconclusive or untested concurrencies. One fresh server per test. A second run resumes: every
completed test is reused (a failed one runs again), the answer is the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.search_outcome import own_outcome

ROOT = Path(__file__).resolve().parents[2]
THRESHOLD = 0.5
VARIANT = "burst_phase_starts=true,warmup_requests_per_lane=1,duration_s=30"

pytestmark = [pytest.mark.slow, pytest.mark.long]   # a dozen points or more, twice: make test-all


def _search(out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "search", str(ROOT / "recipes" / "quickstart-sim.yaml"),
                           "--slo", "ttft_p90<=0.5", "--min-conc", "1", "--max-conc", "8", "--duration", "30",
                           "--set", "client.burst_phase_starts=true", "--set", "client.warmup_requests_per_lane=1",
                           "--max-points", "4", "--out", str(out)], capture_output=True, text=True, timeout=2400,
                          cwd=ROOT)


def _own_outcome(point_dir: Path, conc: int, interval: list[float | None] | None) -> tuple[str, float | None]:
    """(outcome, ttft p90) from the point's own record, independently of the search's code."""
    path = point_dir / "point_result.json"
    if not path.is_file():
        return "fail", None
    record: dict[str, Any] = json.loads(path.read_text())
    ttft = record.get("request_metrics", {}).get("latency", {}).get("ttft", {}).get("p90")
    return own_outcome(record, conc, ttft, interval, THRESHOLD), ttft


def test_search_answer_agrees_with_the_tested_points_own_records(tmp_path: Path) -> None:
    r = _search(tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    found = list(tmp_path.glob(f"quickstart-sim/variants/{VARIANT}/searches/*/search.json"))
    assert len(found) == 1
    doc = json.loads(found[0].read_text())
    assert doc["slo"] == ["ttft_p90<=0.5"] and doc["complete"] is True
    points = doc["points"]
    assert points[0]["conc"] == 1 and len(points) <= 4
    latest: dict[int, dict[str, Any]] = {}
    for p in points:
        outcome, ttft = _own_outcome(Path(p["point_dir"]), p["conc"], p["checks"][0]["interval_95"])
        assert (p["outcome"], p["metrics"]["ttft_p90"]) == (outcome, ttft), p
        assert p["why"] and Path(p["point_dir"]).name == f"conc{p['conc']}"
        latest[p["conc"]] = p
    assert all(p["counted"] == (latest[p["conc"]] is p) for p in points)
    boundary: int | None = doc["boundary_conc"]
    low: int | None = doc["boundary_interval"][0]
    high: int | None = doc["boundary_interval"][1]
    outcomes = {c: p["outcome"] for c, p in latest.items()}
    first_fail = min((c for c, o in outcomes.items() if o == "fail"), default=None)
    assert doc["first_failing_conc"] == first_fail
    assert boundary == max((c for c, o in outcomes.items() if o == "pass" and (first_fail is None or c < first_fail)),
                           default=None)
    if doc["uncertain"]["boundary"]:
        assert low != high and doc["uncertain"]["reason"].startswith("the boundary lies between")
        assert "answer: UNCERTAIN: the boundary lies between" in r.stdout
        assert all(outcomes.get(c, "untested") in ("inconclusive", "untested") for c in range((low or 0) + 1, (high or 0) + 1))
    else:
        assert boundary is not None and low == high == boundary and outcomes[boundary] == "pass"
        assert latest[boundary]["valid"] is True
        if doc["upper_bound_reached"]:
            assert boundary == 8
        else:
            assert first_fail == boundary + 1   # the boundary's neighbour above is a failure of its own record
            assert latest[first_fail]["valid"] is True   # a valid point that breaches the SLO
        assert f"answer: c{boundary} meets the SLO" in r.stdout
        assert doc["agents_per_gpu"] == boundary / 1 and doc["agents_per_node"] == boundary / 1
        assert doc["agents_per_kw"] is None and doc["agents_per_kw_reason"].startswith("power not measured")
    statuses = [json.loads((Path(p["point_dir"]) / "status.json").read_text()) for p in points]
    assert len({s["server_pid"] for s in statuses}) == len(points)      # a fresh server per test
    assert all("launching" in s["phases"] for s in statuses)
    assert (found[0].parent / "search.png").is_file()

    again = _search(tmp_path)   # resumable: every completed test is reused (a failed one runs again), same answer
    assert again.returncode == 0, again.stderr[-3000:]
    assert again.stdout.count("already completed") == sum(p["state"] == "completed" for p in points)
    redo = json.loads(found[0].read_text())
    assert [(p["conc"], p["attempt"], p["outcome"]) for p in redo["points"]] == [
        (p["conc"], p["attempt"], p["outcome"]) for p in points]
    assert (redo["boundary_conc"], redo["boundary_interval"]) == (boundary, [low, high])

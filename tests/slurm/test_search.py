"""`harness search --cluster` on the simulator via the local Slurm: rounds of concurrencies as job arrays (c4..c8,
rounds of the profile's max_parallel 2: three rounds without re-tests), each point its own array task and server;
an inconclusive point inside the bracket is re-tested as the local search does (attempt 2 with twice the window,
an array of its own); the outcomes in search.json are the points' own records judged against the SLO; a second run
reuses every point. Which rounds the points ask for is `round_tests`' unit tests' business."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.search.order import bracket
from harness.search.outcome import SearchSpec, search_json
from harness.search.slo import parse_slo
from tests.search_outcome import own_outcome
from tests.slurm.conftest import LOCAL_CI, QUICKSTART, harness

SLO = "ttft_p90<=0.5"
# one warmup call per lane: what is tested is the rounds and the outcomes, not the window (the preset's ten take ~90 s
# at c8 on the demo profile)
ARGS = ("search", str(QUICKSTART), "--cluster", str(LOCAL_CI), "--slo", SLO, "--min-conc", "4", "--max-conc", "8",
        "--set", "client.warmup_requests_per_lane=1", "--duration", "20", "--interval", "1")
SEARCH_DIR = Path("quickstart-sim/variants/warmup_requests_per_lane=1,duration_s=20/searches/ttft_p90-le-0.5")


@pytest.fixture(scope="module")
def search(slurm: None, harness_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("search")
    proc = harness(harness_env, *ARGS, "--out", str(out), timeout=900)
    doc = json.loads((out / SEARCH_DIR / "search.json").read_text()) if proc.returncode == 0 else None
    return {"out": out, "proc": proc, "doc": doc}


def _local_points(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The points of a local search.json built from the same points' records."""
    from harness.search.tested import read_tested

    tested = [read_tested(Path(p["point_dir"]), p["conc"], [parse_slo(SLO)]) for p in doc["points"]]
    outcomes = {v.conc: v.outcome for v in tested}
    return search_json(SearchSpec("r", "k", None, (parse_slo(SLO),), 4, 8, 1, 1), tested,
                       bracket(outcomes, 4, 8), True)["points"]


def _record(point: dict[str, Any]) -> dict[str, Any]:
    return json.loads((Path(point["point_dir"]) / "point_result.json").read_text())


def test_search_completes_with_the_shape_of_the_local_search(search: dict[str, Any]) -> None:
    assert search["proc"].returncode == 0, search["proc"].stdout[-3000:] + search["proc"].stderr[-3000:]
    doc = search["doc"]
    local = search_json(SearchSpec("r", "k", None, (parse_slo(SLO),), 4, 8, 1, 1), [], bracket({}, 4, 8), True)
    assert set(local) <= set(doc) and set(doc) - set(local) - {"schema_version"} == {"cluster", "rounds"}
    assert doc["points"] == _local_points(doc)   # the local search reads the same records the same way
    assert (doc["complete"], doc["cluster"], doc["slo"], doc["min_conc"], doc["max_conc"]) == (
        True, "local-ci", [SLO], 4, 8)
    assert (search["out"] / SEARCH_DIR / "search.png").is_file()
    assert "answer: " in search["proc"].stdout


def test_every_outcome_is_its_points_own_record(search: dict[str, Any]) -> None:
    doc = search["doc"]
    assert doc["points"] and len({(p["conc"], p["attempt"]) for p in doc["points"]}) == len(doc["points"])
    for p in doc["points"]:
        record = _record(p)
        ttft = record["request_metrics"]["latency"]["ttft"]["p90"]
        assert (record["conc"], record["state"], p["state"]) == (p["conc"], "completed", "completed")
        assert p["metrics"] == {"ttft_p90": ttft} and p["valid"] == record["validity"]["valid"]
        own = own_outcome(record, p["conc"], ttft, p["checks"][0]["interval_95"], 0.5)
        assert (p["outcome"], p["meets_slo"]) == (own, own == "pass") and p["why"], p


def test_the_boundary_is_a_pass_next_to_a_failure_or_the_answer_is_uncertain(search: dict[str, Any]) -> None:
    doc = search["doc"]
    by_conc = {p["conc"]: p for p in doc["points"] if p["counted"]}
    boundary, first_fail = doc["boundary_conc"], doc["first_failing_conc"]
    if doc["uncertain"]["boundary"]:   # the interval holds only inconclusive points, each re-tested to the end
        low, high = doc["boundary_interval"]
        assert doc["uncertain"]["reason"].startswith("the boundary lies between") and "answer: UNCERTAIN" in \
            search["proc"].stdout
        assert all(by_conc[c]["outcome"] == "inconclusive" and by_conc[c]["attempt"] == 3
                   for c in by_conc if (low or 0) < c <= high)
        return
    assert boundary is not None and by_conc[boundary]["meets_slo"], doc["points"]
    assert doc["agents_per_gpu"] == boundary and doc["agents_per_node"] == boundary   # the sim point: 1 GPU
    # every tested concurrency between the boundary and the first failure fell short only for too little evidence
    between = [c for c in by_conc if c > boundary and (first_fail is None or c < first_fail)]
    assert all(by_conc[c]["outcome"] == "inconclusive" for c in between), doc["points"]
    top = max([boundary, *between])
    if first_fail is None:
        assert top == 8 and doc["upper_bound_reached"] == (boundary == 8)
    else:
        assert first_fail == top + 1 and by_conc[first_fail]["outcome"] == "fail" and not doc["upper_bound_reached"]


def test_each_round_is_one_job_array_per_attempt_each_point_its_own_task_and_server(
        search: dict[str, Any]) -> None:
    doc = search["doc"]
    rounds = doc["rounds"]
    retests = [p for p in doc["points"] if p["attempt"] > 1]
    assert 1 <= len(rounds) <= 3 + len(retests) and [r["round"] for r in rounds] == list(range(1, len(rounds) + 1))
    assert rounds[0]["concs"] == [4, 8] and rounds[0]["attempts"] == [1, 1]   # c4 and its doubling: max_parallel 2
    assert all(1 <= len(r["concs"]) <= 2 and r["reused"] == [] for r in rounds)
    assert [(c, a) for r in rounds for c, a in zip(r["concs"], r["attempts"], strict=True)] == [
        (p["conc"], p["attempt"]) for p in doc["points"]]
    jobs = [j for r in rounds for j in r["jobs"]]
    assert len({j["job_id"] for j in jobs}) == len(jobs) and all(r["job_id"] == r["jobs"][0]["job_id"] for r in rounds)
    assert all(len({j["attempt"] for j in r["jobs"]}) == len(r["jobs"]) for r in rounds)   # one array per attempt
    tasks = {(t["conc"], t["attempt"]): (t["job_id"], t["task_id"]) for r in rounds for t in r["tasks"]}
    assert sorted(tasks) == sorted((p["conc"], p["attempt"]) for p in doc["points"])
    assert len(set(tasks.values())) == len(tasks)
    for p in doc["points"]:
        pdir = Path(p["point_dir"])
        env = json.loads((pdir / "status.json").read_text())["slurm"]
        job, task = tasks[(p["conc"], p["attempt"])]
        assert (env["SLURM_ARRAY_JOB_ID"], int(env["SLURM_ARRAY_TASK_ID"])) == (job, task)
        assert f"conc{p['conc']}: completed" in (search["out"] / "slurm" / f"{job}_{task}.out").read_text()
        assert (pdir / "server.log").stat().st_size > 0 and (pdir / "server_command.txt").is_file()
    for p in retests:   # an inconclusive point re-tested: twice the window, a variant of its own (then a repeat)
        first = next(q for q in doc["points"] if q["conc"] == p["conc"] and q["attempt"] == 1)
        assert first["outcome"] == "inconclusive" and p["window_s"] == 40
        assert Path(p["point_dir"]).parent.name == "warmup_requests_per_lane=1,duration_s=40" + (
            f"+repeat{p['attempt'] - 2}" if p["attempt"] > 2 else "")
        assert f"c{p['conc']} test {p['attempt']}" in search["proc"].stdout
    assert "[search] round 1 of at most " in search["proc"].stdout               # the rounds' progress
    assert f"[search] round {len(rounds)} of at most " in search["proc"].stdout
    for r in rounds:
        for j in r["jobs"]:
            assert f"[search] round {r['round']}: job {j['job_id']}: " in search["proc"].stdout
            assert f"[search] round {r['round']}: job {j['job_id']} done" in search["proc"].stdout


def test_a_second_run_reuses_every_point(search: dict[str, Any], harness_env: dict[str, str]) -> None:
    first = search["doc"]
    proc = harness(harness_env, *ARGS, "--out", str(search["out"]), timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    doc = json.loads((search["out"] / SEARCH_DIR / "search.json").read_text())
    assert [(r["job_id"], r["jobs"]) for r in doc["rounds"]] == [(None, [])] * len(first["rounds"])
    assert [r["reused"] for r in doc["rounds"]] == [r["concs"] for r in first["rounds"]]
    keep = ("points", "boundary_conc", "first_failing_conc", "upper_bound_reached")
    assert {k: doc[k] for k in keep} == {k: first[k] for k in keep}
    assert "array task" not in proc.stdout

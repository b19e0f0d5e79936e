"""Run directories written the way the point runner writes them (record, status, plan, row, per-request records), with
latencies the test chooses; and the stores the store's tests run against: SQLite always, PostgreSQL where
HARNESS_TEST_POSTGRES_URL names a server (a fresh schema per test). HARNESS_REQUIRE_POSTGRES=1 (set by .ci/run) makes
a missing server a failure."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import pytest

PG_ENV = "HARNESS_TEST_POSTGRES_URL"
REQUIRE_PG = "HARNESS_REQUIRE_POSTGRES"


def _request(e2el_s: float, ttft_s: float) -> str:
    return json.dumps({"metadata": {"benchmark_phase": "profiling", "was_cancelled": False},
                       "metrics": {"request_latency": {"value": e2el_s * 1000, "unit": "ms"},
                                   "time_to_first_token": {"value": ttft_s * 1000, "unit": "ms"}}},
                      separators=(",", ":"))


def write_point(point_dir: Path, *, conc: int = 4, attempt: str = "20260101T000000Z-aaaaaa", e2el: Sequence[float] = (),
                state: str = "completed", valid: bool = True, tput: float = 1000.0, settings: dict[str, Any] | None = None,
                client_version: str = "1.0.12", scenario: str = "agentx", image: str = "lmsysorg/sglang:v0.5.23-cu130",
                config_key: str = "quickstart-sim", start_ns: int = 1_800_000_000_000_000_000, tag: str | None = None,
                record: bool = True) -> Path:
    """One run of a point in `point_dir`: with `e2el` samples (TTFT a tenth of each) unless it failed."""
    point_dir.mkdir(parents=True, exist_ok=True)
    settings = settings or {"image": image, "engine": "sim", "sglang_version": "0.5.23",
                            "args": {"max-running-requests": 32}, "client": {"scenario": scenario}}
    (point_dir / "plan.json").write_text(json.dumps({"config_key": config_key, "conc": conc, "name": f"c{conc}",
                                                     "settings": settings}))
    (point_dir / "status.json").write_text(json.dumps({
        "schema_version": 1, "config_key": config_key, "conc": conc, "state": state,
        "reason": None if state == "completed" else "ready_timeout: the server never answered",
        "phases": {"launching": start_ns - 10**9}, "harness_host": "vm", "attempt": attempt, "tag": tag,
        "image": image, "engine": "sim"}))
    if state != "completed" or not record:
        return point_dir
    xs = np.asarray(e2el, dtype=float)
    aiperf = point_dir / "aiperf"
    aiperf.mkdir(exist_ok=True)
    (aiperf / "profile_export.jsonl").write_text("".join(_request(e, e / 10) + "\n" for e in xs))
    pct = (lambda q: float(np.percentile(xs, q))) if len(xs) else (lambda q: None)
    (point_dir / "bmk_agentic_row.json").write_text(json.dumps({"conc": conc, "joules_per_total_token": None}))
    (point_dir / "point_result.json").write_text(json.dumps({
        "schema_version": 1, "config_key": config_key, "conc": conc, "engine": "sim", "simulated": True,
        "image": image, "hw": "sim", "recipe_fingerprint": "f" * 64, "scenario_type": "agentic-coding",
        "state": "completed", "variant": None, "tag": tag, "attempt": attempt,
        "harness_commit": {"commit": "0123456789abcdef", "dirty": False, "source": "git"},
        "num_requests_successful": len(xs), "row": "bmk_agentic_row.json",
        "request_metrics": {"latency": {"e2el": {"p50": pct(50), "p90": pct(90)},
                                        "ttft": {"p90": pct(90) and pct(90) / 10},
                                        "intvty": {"p90": 30.0}},
                            "throughput": {"window_start_ns": start_ns, "per_gpu": {"total_tput_tps": tput}}},
        "client": {"tool": {"name": "agentx-harness", "version": client_version}, "scenario": scenario,
                   "requested_duration_s": 20.0},
        "fingerprint": {"host": "vm", "gpus": [], "server_version": "0.5.23", "image": image},
        "validity": {"valid": valid, "reasons": [] if valid else [{"code": "too_few_requests", "message": "x"}]},
    }))
    return point_dir


def latencies(n: int, median: float, seed: int, spread: float = 0.1) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(v) for v in median * np.exp(rng.normal(0.0, spread, n))]


def postgres_url() -> str | None:
    url = os.environ.get(PG_ENV)
    if not url and os.environ.get(REQUIRE_PG) == "1":
        pytest.fail(f"{REQUIRE_PG}=1 but {PG_ENV} is not set")
    return url or None


def _fresh_schema(url: str) -> Iterator[str]:
    psycopg = pytest.importorskip("psycopg")
    name = f"t_{secrets.token_hex(6)}"
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f"CREATE SCHEMA {name}")
    except psycopg.Error as exc:
        if os.environ.get(REQUIRE_PG) == "1":
            pytest.fail(f"{REQUIRE_PG}=1 but PostgreSQL at {PG_ENV} does not answer: {exc}")
        pytest.skip(f"PostgreSQL at {PG_ENV} does not answer: {exc}")
    sep = "&" if "?" in url else "?"
    try:
        yield f"{url}{sep}options={quote(f'-csearch_path={name}')}"
    finally:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f"DROP SCHEMA {name} CASCADE")


BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh empty store of each backend: a SQLite file, or a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        yield str(tmp_path / "store" / "results.sqlite3")
        return
    url = postgres_url()
    if url is None:
        pytest.skip(f"{PG_ENV} is not set (a PostgreSQL URL; .ci/run sets it)")
    yield from _fresh_schema(url)

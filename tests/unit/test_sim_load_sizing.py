"""benchmarks/sim_load.py: its shared prefix fits the profile's KV pool beside every stream's own tokens, and a
concurrency that measured nothing makes it exit 1 with a message."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _sim_load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sim_load", ROOT / "benchmarks" / "sim_load.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_prefix_leaves_the_streams_room_in_the_pool() -> None:
    m = _sim_load()
    pool = 33_000
    for streams in (1, 8, 48, 128):
        tokens = m.prefix_tokens(40_000, pool, streams, 400)
        assert 0 <= tokens <= 40_000
        assert tokens == 0 or tokens + streams * (400 + m.SUFFIX_TOKENS) <= pool
    assert m.prefix_tokens(40_000, 10_000_000, 48, 400) == 40_000   # a large pool: the cap
    assert m.prefix_tokens(40_000, None, 48, 400) == 40_000         # a pool not reported: the cap


def test_a_run_that_measured_nothing_exits_1_naming_it(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    m = _sim_load()
    runs = {48: 120, 128: 0}
    monkeypatch.setattr(m, "run_one", lambda n, args: {
        "streams": n, "events_per_s": 10.0 * runs[n], "median_lag_ms": 1.0, "decode_steps": runs[n],
        "prefix_tokens": 0, "kv_pool_tokens": 33_000})
    monkeypatch.setattr(sys, "argv", ["sim_load.py"])
    assert m.main() == 1
    err = capsys.readouterr().err
    assert "sim_load: measured nothing at 128 streams: 0 decode steps" in err and "48 streams" not in err
    runs[128] = 5
    assert m.main() == 0

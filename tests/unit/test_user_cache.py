"""The harness's per-user cache: HARNESS_CACHE_DIR, else $XDG_CACHE_HOME/harness, else ~/.cache/harness."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.user_cache import user_cache


def test_the_cache_follows_harness_cache_dir_then_xdg_then_home(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    monkeypatch.delenv("HARNESS_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_cache("x") == tmp_path / "home" / ".cache" / "harness" / "x"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache("x") == tmp_path / "xdg" / "harness" / "x"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "mine"))
    assert user_cache("x") == tmp_path / "mine" / "x"

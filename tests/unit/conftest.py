"""The unit tier is pure and fast: it never imports SGLang, so the `sglang-hooks` review rule finds no wheel here
(N/A) and `harness check` stays a sub-second call. SGLang's own judgment is tested in `tests/sglang/`."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_sglang_wheels(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("HARNESS_SGLANG_WHEELS", str(tmp_path_factory.getbasetemp() / "no-sglang-wheels"))

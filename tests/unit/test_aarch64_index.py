"""tools/aarch64_wheels.py reads PyPI's index page of each resolved release: a page that lists no file of that
release (an older page a cache kept) is asked for again past caches, and is an error if it still lists none,
never a release "without an aarch64 wheel"."""

from __future__ import annotations

import io
import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

import aarch64_wheels  # noqa: E402

OLD = ["lxml-6.0.2-cp311-cp311-manylinux2014_aarch64.manylinux_2_17_aarch64.whl", "lxml-6.0.2.tar.gz"]
NEW = [*OLD, "lxml-6.2.1-cp311-cp311-manylinux2014_aarch64.manylinux_2_17_aarch64.whl", "lxml-6.2.1.tar.gz"]


def _index(pages: list[list[str]], asked: list[dict[str, str]]) -> Any:
    def urlopen(req: urllib.request.Request, timeout: float) -> io.BytesIO:
        asked.append(dict(req.header_items()))
        return io.BytesIO(json.dumps({"files": [{"filename": f} for f in pages[len(asked) - 1]]}).encode())
    return urlopen


def test_an_older_page_is_asked_again_past_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[dict[str, str]] = []
    monkeypatch.setattr(aarch64_wheels.urllib.request, "urlopen", _index([OLD, NEW], asked))
    got = aarch64_wheels.release("lxml", "6.2.1", aarch64_wheels.aarch64_tags())
    assert got.wheel == NEW[2] and got.sdist
    assert "Cache-control" not in asked[0] and asked[1]["Cache-control"] == "no-cache"


def test_a_page_that_never_lists_the_release_is_an_error_not_a_missing_wheel(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[dict[str, str]] = []
    monkeypatch.setattr(aarch64_wheels.urllib.request, "urlopen", _index([OLD, OLD], asked))
    with pytest.raises(aarch64_wheels.ResolveError, match="lists no file of lxml==6.2.1, which pip resolved"):
        aarch64_wheels.release("lxml", "6.2.1", aarch64_wheels.aarch64_tags())
    assert len(asked) == 2


def test_a_listed_release_without_an_aarch64_wheel_is_missing_at_the_first_answer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[dict[str, str]] = []
    sdist_only = ["crick-0.0.8-cp311-cp311-manylinux_2_17_x86_64.whl", "crick-0.0.8.tar.gz"]
    monkeypatch.setattr(aarch64_wheels.urllib.request, "urlopen", _index([sdist_only], asked))
    got = aarch64_wheels.release("crick", "0.0.8", aarch64_wheels.aarch64_tags())
    assert got.wheel is None and got.sdist and len(asked) == 1

"""The inspect page in a real headless Chromium, offline: the demo's c8 against its c4 (real simulator points, real
AIPerf: tests/fixtures/inspect/demo) loads with no console error, every panel it draws has data, its findings lead
the page, and nothing is fetched. The screenshot is kept under build/test-artifacts/ (a CI artifact).

Skipped where Chromium is absent, except when HARNESS_REQUIRE_BROWSER=1 (set by .ci/run).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from harness.inspect.write import inspect_points

from .browser import chromium, load_page

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "tests" / "fixtures" / "inspect" / "demo"
ARTIFACTS = Path(os.environ.get("HARNESS_TEST_ARTIFACTS", ROOT / "build" / "test-artifacts"))

pytestmark = pytest.mark.skipif(chromium() is None and os.environ.get("HARNESS_REQUIRE_BROWSER") != "1",
                                reason="chromium not installed (HARNESS_REQUIRE_BROWSER=1 makes this a failure)")

MEASURE = r"""JSON.stringify({
  panels: [...document.querySelectorAll('svg.panel')].map(s => ({
    title: s.querySelector('title').textContent,
    marks: s.querySelectorAll('polyline, circle, path, rect[fill]:not([fill="none"])').length,
  })),
  firstH2: document.querySelector('h2').textContent,
  findings: document.querySelectorAll('ul.findings li').length,
  scripts: document.scripts.length,
  external: [...document.querySelectorAll('[src], link[href]')].map(e => e.getAttribute('src') || e.href),
  resources: performance.getEntriesByType('resource').length,
  width: document.documentElement.scrollWidth,
})"""


def test_the_demo_c8_against_c4_opens_offline_with_every_panel_drawn(tmp_path: Path) -> None:
    assert chromium(), "chromium is required here (HARNESS_REQUIRE_BROWSER=1) but not installed"
    for name in ("conc4", "conc8"):
        shutil.copytree(DEMO / name, tmp_path / name)
    done = inspect_points(tmp_path / "conc8", tmp_path / "conc4", tmp_path / "c8-vs-c4.html")
    page = load_page(done.html_path, tmp_path / "chromium-profile", MEASURE, width=1300, height=2400)
    assert page.errors == []
    m = json.loads(page.value)
    titles = [p["title"] for p in m["panels"]]
    assert len(titles) >= 6, titles
    for wanted in ("Requests: in flight", "KV pool use", "Tokens per slice", "TTFT and E2EL",
                   "c8: sessions", "c4: sessions", "SIMULATOR GROUND TRUTH"):
        assert any(t.startswith(wanted) or wanted in t for t in titles), (wanted, titles)
    # every panel carries its data, beyond its frame and its phase bands
    assert all(p["marks"] > 10 for p in m["panels"]), m["panels"]
    assert m["firstH2"] == "Side by side" and m["findings"] >= 4
    assert m["scripts"] == 0 and m["external"] == [] and m["resources"] == 0   # nothing fetched, nothing run
    assert m["width"] <= 1300
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "inspect-demo-c8-vs-c4.png").write_bytes(page.screenshot_png)
    assert len(page.screenshot_png) > 50_000


def test_a_failed_point_opens_with_its_reason_on_top(tmp_path: Path) -> None:
    pdir = tmp_path / "conc16"
    pdir.mkdir()
    (pdir / "status.json").write_text(json.dumps({
        "schema_version": 1, "config_key": "k", "conc": 16, "state": "failed",
        "reason": "ready_timeout: the server did not answer /health within 600 s",
        "phases": {"launching": 1_796_000_000_000_000_000, "loading": 1_796_000_001_000_000_000}}))
    done = inspect_points(pdir)
    page = load_page(done.html_path, tmp_path / "chromium-profile",
                     "JSON.stringify([document.querySelector('.banner.bad').textContent, "
                     "document.querySelectorAll('svg.panel').length])")
    assert page.errors == []
    banner, panels = json.loads(page.value)
    assert banner.startswith("c16: failed: ready_timeout") and panels == 0

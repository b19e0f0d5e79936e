"""`search.png` of a search on the simulator says so in its title; a real search's title does not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.search import plot


def _doc() -> dict[str, Any]:
    return {"config_key": "quickstart-sim", "slo": ["e2el_p90<=10"], "min_conc": 1, "boundary_conc": 2,
            "uncertain": None, "points": [
                {"conc": c, "outcome": "pass", "state": "completed", "valid": True, "metrics": {"e2el_p90": v}}
                for c, v in ((1, 2.0), (2, 4.0))]}


@pytest.mark.parametrize("simulated", [True, False])
def test_the_title_says_simulated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, simulated: bool) -> None:
    titles: list[str] = []
    monkeypatch.setattr(plot, "write_figure", lambda path, fig, **kw: titles.append(fig._suptitle.get_text()))
    plot.plot_search(_doc(), tmp_path / "search.png", simulated=simulated)
    assert titles[0].startswith("SIMULATED: ") is simulated and "quickstart-sim: e2el_p90<=10" in titles[0]

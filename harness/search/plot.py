"""`search.png` beside `search.json`: each SLO metric against concurrency over the tested points, the threshold
as a horizontal line and the boundary as a vertical one (matplotlib, Agg backend)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

COLORS = {"pass": "tab:green", "fail": "tab:red", "inconclusive": "tab:gray"}
PLOT_FILE = "search.png"


def plot_search(doc: dict[str, Any], path: Path) -> Path:
    """Draw the search of `doc` (a `search.json` body) to `path`."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import ScalarFormatter

    from harness.search.slo import parse_slo

    slos = [parse_slo(text) for text in doc["slo"]]
    fig, axes = plt.subplots(len(slos), 1, figsize=(7, 3.2 * len(slos)), squeeze=False)
    points = sorted(doc["points"], key=lambda p: p["conc"])
    for ax, slo in zip(axes[:, 0], slos, strict=True):
        for outcome, color in COLORS.items():
            xs = [p["conc"] for p in points if p["outcome"] == outcome and p["metrics"].get(slo.name) is not None]
            ys = [p["metrics"][slo.name] for p in points if p["outcome"] == outcome
                  and p["metrics"].get(slo.name) is not None]
            if xs:
                ax.scatter(xs, ys, color=color, label=outcome, zorder=3)
        measured = [p for p in points if p["metrics"].get(slo.name) is not None]
        ax.plot([p["conc"] for p in measured], [p["metrics"][slo.name] for p in measured], color="0.7", zorder=2)
        ax.axhline(slo.value, color="tab:blue", linestyle="--", label=slo.text)
        if doc["boundary_conc"] is not None:
            ax.axvline(doc["boundary_conc"], color="black", linestyle=":", label=f"boundary c{doc['boundary_conc']}")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.set_xlabel("concurrency")
        ax.set_ylabel(f"{slo.name}")
        ax.legend(fontsize="small")
    fig.suptitle(f"{doc['config_key']}: {' and '.join(doc['slo'])}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path

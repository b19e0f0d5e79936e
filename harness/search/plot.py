"""`search.png` beside `search.json`: each SLO metric against concurrency over the tested points, the threshold
as a horizontal line and the boundary as a vertical one (matplotlib, Agg backend). Each kind of point has its own
colour and marker in the legend (`KINDS`): a pass, a valid point breaching the SLO, a failed or invalid point, an
inconclusive one (its sample cannot tell), and a test its concurrency no longer counts by (a later try replaced it).
An uncertain answer shades the interval in which the boundary lies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.artifacts import write_figure
from harness.search.slo import parse_slo

# kind -> (label, colour, marker, filled)
KINDS = {
    "pass": ("pass", "tab:green", "o", True),
    "breach": ("fail: SLO breached", "tab:red", "X", True),
    "invalid": ("fail: point failed or invalid", "darkred", "s", True),
    "inconclusive": ("inconclusive: its sample cannot tell", "tab:orange", "D", False),
    "superseded": ("replaced by a later try", "0.6", "o", False),
}
PLOT_FILE = "search.png"


def kind(point: dict[str, Any]) -> str:
    """The kind of a `search.json` point, as the plot draws it."""
    if not point.get("counted", True):
        return "superseded"
    if point["outcome"] == "fail":
        return "breach" if point["state"] == "completed" and point["valid"] else "invalid"
    return str(point["outcome"])


def plot_search(doc: dict[str, Any], path: Path, simulated: bool = False) -> Path:
    """Draw the search of `doc` (a `search.json` body) to `path`; the title of a search on the simulator
    (`simulated`) starts with SIMULATED."""
    import matplotlib  # heavy: matplotlib, only when a search is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    slos = [parse_slo(text) for text in doc["slo"]]
    fig, axes = plt.subplots(len(slos), 1, figsize=(7, 3.2 * len(slos)), squeeze=False)
    points = sorted(doc["points"], key=lambda p: p["conc"])
    for ax, slo in zip(axes[:, 0], slos, strict=True):
        for name, (label, color, marker, filled) in KINDS.items():
            shown = [p for p in points if kind(p) == name and p["metrics"].get(slo.name) is not None]
            if shown:
                ax.scatter([p["conc"] for p in shown], [p["metrics"][slo.name] for p in shown], marker=marker,
                           s=56, label=label, zorder=3, linewidths=1.5, edgecolors=color,
                           facecolors=color if filled else "none")
        measured = [p for p in points if p["metrics"].get(slo.name) is not None and p.get("counted", True)]
        ax.plot([p["conc"] for p in measured], [p["metrics"][slo.name] for p in measured], color="0.7", zorder=2)
        ax.axhline(slo.value, color="tab:blue", linestyle="--", label=slo.text)
        interval = (doc.get("uncertain") or {}).get("interval") or [None, None]
        if (doc.get("uncertain") or {}).get("boundary") and interval[1] is not None:
            ax.axvspan(interval[0] or doc["min_conc"], interval[1], color="tab:orange", alpha=0.12,
                       label="the boundary lies here (uncertain)")
        if doc["boundary_conc"] is not None:
            name = "highest pass" if (doc.get("uncertain") or {}).get("boundary") else "boundary"
            ax.axvline(doc["boundary_conc"], color="black", linestyle=":", label=f"{name} c{doc['boundary_conc']}")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
        ax.set_xlabel("concurrency")
        ax.set_ylabel(f"{slo.name}")
        ax.legend(fontsize="small")
    fig.suptitle(f"{'SIMULATED: ' if simulated else ''}{doc['config_key']}: {' and '.join(doc['slo'])}")
    fig.tight_layout()
    write_figure(path, fig, dpi=100)
    plt.close(fig)
    return path

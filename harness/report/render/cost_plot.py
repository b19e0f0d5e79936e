"""`cost_frontier.png`: cost per million total tokens against E2EL p90, each curve's own cost frontier (lower cost
at lower latency: down and to the left is better), drawn beside the throughput frontier (`pareto.png`). Only valid
points with a cost (`harness.report.analysis.goodput`) are drawn; invalid ones as grey crosses."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.artifacts import write_figure
from harness.report.analysis.curves import Curve
from harness.report.analysis.pareto import pareto_frontier
from harness.report.render.plots import _pyplot, marker, point_label, title


def cost_per_mtok(p: Any) -> float | None:
    value = (p.cost or {}).get("per_million_total_tokens")
    return float(value) if isinstance(value, (int, float)) else None


def cost_frontier(c: Curve) -> list[str]:
    """The ids of a curve's valid points on its cost frontier (min E2EL p90, min cost per million tokens)."""
    keyed = [(pid, p.stat("e2el", "p90"), cost_per_mtok(p)) for pid, p in c.labelled() if p.valid]
    return pareto_frontier(keyed, "min", "min").frontier


def plot_cost_frontier(curves: Sequence[Curve], path: Path) -> Path:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(12, 5.5), dpi=110)
    currencies = sorted({str(p.cost["currency"]) for c in curves for p in c.points if p.cost})
    for i, c in enumerate(curves):
        color = f"C{i % 10}"
        on = set(cost_frontier(c))
        fx, fy = [], []
        for pid, p in c.labelled():
            x, y = p.stat("e2el", "p90"), cost_per_mtok(p)
            if x is None or y is None:
                continue
            if not p.valid:
                ax.scatter([x], [y], marker="x", color="0.55", zorder=3)
                ax.annotate(f"{pid} (invalid)", (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7,
                            color="0.45")
                continue
            ax.scatter([x], [y], marker=marker(p), color=color, alpha=0.45 if pid not in on else 1.0, zorder=3)
            ax.annotate(point_label(pid, p), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=8,
                        color=color)
            if pid in on:
                fx.append(x)
                fy.append(y)
        if fx:
            order = sorted(range(len(fx)), key=lambda k: fx[k])
            ax.plot([fx[k] for k in order], [fy[k] for k in order], "-", color=color,
                    label=f"{c.label}  cost frontier {len(fx)}/{sum(1 for p in c.points if p.valid and cost_per_mtok(p))}")
    ax.set_xlabel("E2EL p90 (s)  (lower is better)")
    ax.set_ylabel(f"cost per million total tokens ({'/'.join(currencies) or '-'})")
    ax.set_title(title(curves, "Cost per million tokens vs E2EL p90: down and to the left is better"))
    ax.grid(True, alpha=0.3)
    handles, names = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles, names, fontsize=8, loc="best")
    fig.tight_layout()
    write_figure(path, fig)
    plt.close(fig)
    return path

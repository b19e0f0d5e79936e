"""A point's history as a table, a PNG trend (each run's value with its 95 % interval; a dashed line and a letter
where something changed, the letters explained under the plot) and a self-contained HTML page holding both."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.artifacts import write_figure, write_text
from harness.history.series import METRICS, History


def _day(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, tz=UTC).strftime("%Y-%m-%d %H:%M")


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.4g}"


def _letter(i: int) -> str:
    return chr(ord("A") + i % 26) + ("" if i < 26 else str(i // 26))


def mark_letters(h: History) -> dict[int, str]:
    """Row index -> the letter of its mark."""
    return {i: _letter(n) for n, i in enumerate(i for i, r in enumerate(h.rows) if r.marks)}


def table(histories: Sequence[History]) -> str:
    lines = []
    for h in histories:
        title = METRICS[h.metric][0]
        lines += [f"{h.config_key} {h.point}: {title} over {len(h.rows)} runs",
                  f"  {'run':>5}  {'started (UTC)':<16}  {'runs':>4}  {'value':>9}  {'95% interval':>21}  state / changes"]
        for r in h.rows:
            interval = "-" if r.low is None or r.high is None else f"[{r.low:.4g}, {r.high:.4g}]"
            note = r.state if r.state != "completed" else ""
            note = "; ".join(x for x in (note, *(f"changed: {m}" for m in r.marks)) if x)
            lines.append(f"  {r.run_id:>5}  {_day(r.started_at_ns):<16}  {len(r.entries):>4}  {_num(r.value):>9}  "
                         f"{interval:>21}  {note}")
        lines.append("")
    return "\n".join(lines)


def figure(histories: Sequence[History]) -> Any:
    import matplotlib  # heavy: only when a picture is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(histories), 1, figsize=(10, 3.6 * len(histories)), squeeze=False)
    for ax, h in zip(axes[:, 0], histories):
        xs = [datetime.fromtimestamp(r.started_at_ns / 1e9, tz=UTC) for r in h.rows]
        good = [(x, r) for x, r in zip(xs, h.rows) if r.value is not None]
        if good:
            ax.plot([x for x, _ in good], [r.value for _, r in good], "o-", color="tab:blue")
            bars = [(x, r.low, r.high) for x, r in good if r.low is not None and r.high is not None]
            if bars:   # one call for every interval bar: a thousand runs draw in a moment
                ax.vlines([b[0] for b in bars], [b[1] for b in bars], [b[2] for b in bars], color="tab:blue",
                          alpha=0.5, linewidth=3)
        failed = [x for x, r in zip(xs, h.rows) if r.value is None]
        if failed:
            ax.vlines(failed, 0, 1, transform=ax.get_xaxis_transform(), color="tab:red", alpha=0.3, linestyle=":")
        for i, letter in mark_letters(h).items():
            ax.axvline(xs[i], color="tab:orange", linestyle="--")
            ax.annotate(letter, (xs[i], 1.0), xycoords=("data", "axes fraction"), ha="center", va="bottom",
                        color="tab:orange", fontweight="bold")
        title, sample = METRICS[h.metric]
        better = "higher is better" if sample is None and h.metric != "j_per_token" else "lower is better"
        ax.set_title(f"{h.config_key} {h.point}: {title} ({better}); bars: 95% interval; dashed: a change",
                     fontsize=9, pad=14)
        ax.set_ylabel(title)
        ax.grid(alpha=0.3)
    fig.autofmt_xdate()
    fig.tight_layout()
    return fig


def page(histories: Sequence[History], png: bytes) -> str:
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>harness history</title><style>"
             "body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:collapse}"
             "td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}.mark{color:#c60}</style></head><body>",
             "<h1>History</h1>",
             f"<img alt='trend' style='max-width:100%' src='data:image/png;base64,{base64.b64encode(png).decode()}'>"]
    for h in histories:
        letters = mark_letters(h)
        parts.append(f"<h2>{html.escape(h.config_key)} {html.escape(h.point)}: {html.escape(METRICS[h.metric][0])}</h2>"
                     "<table><tr><th>run</th><th>started (UTC)</th><th>runs</th><th>value</th>"
                     "<th>95% interval</th><th>state</th><th>changed since the run before</th></tr>")
        for i, r in enumerate(h.rows):
            interval = "-" if r.low is None or r.high is None else f"[{r.low:.4g}, {r.high:.4g}]"
            marks = "<br>".join(html.escape(m) for m in r.marks)
            mark = f"<b class='mark'>{letters[i]}</b> {marks}" if i in letters else ""
            parts.append(f"<tr><td>{r.run_id}</td><td>{_day(r.started_at_ns)}</td><td>{len(r.entries)}</td>"
                         f"<td>{_num(r.value)}</td><td>{interval}</td><td>{html.escape(r.state)}</td>"
                         f"<td>{mark}</td></tr>")
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write(histories: Sequence[History], out: Path) -> tuple[Path, Path]:
    """`history.png` and `history.html` in `out`."""
    fig = figure(histories)
    out.mkdir(parents=True, exist_ok=True)
    try:
        png_path = write_figure(out / "history.png", fig, dpi=100)
    finally:
        import matplotlib.pyplot as plt  # heavy: loaded by figure() already

        plt.close(fig)
    return png_path, write_text(out / "history.html", page(histories, png_path.read_bytes()))

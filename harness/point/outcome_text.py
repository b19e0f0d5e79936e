"""A point's end as the console shows it: its state and reason, why a server failed, the verdict of its record."""

from __future__ import annotations

from harness.point.run import PointOutcome
from harness.point.servers.server_failure import failure_excerpt, render_excerpt


def describe_outcome(o: PointOutcome, rehearse: str | None = None) -> str:
    """The point's end as the console shows it: its state and reason; for a server that failed, the end of its log
    that says why and the log's path; where the engine cannot start on this machine, the command of the simulator
    rehearsal (`rehearse`)."""
    lines = [f"{o.point_dir}: {o.state}" + (f" ({o.reason})" if o.reason else "")]
    excerpt = failure_excerpt(o.point_dir, o.reason) if o.state == "failed" else None
    if excerpt is not None:
        lines += render_excerpt(excerpt)
        if excerpt.engine_missing:
            lines.append(f"  this machine cannot start the engine: {excerpt.engine_missing}")
            if rehearse:
                lines.append("  rehearse it on the simulator instead (no GPU; results labelled SIMULATED, "
                             f"unofficial): {rehearse}")
    if o.result is not None:
        v = o.result["validity"]
        lines.append(f"  result: {o.result_path}  verdict: {'valid' if v['valid'] else 'INVALID'}; "
                     f"{o.result['publishable']['label']}")
        for r in v["reasons"]:
            lines.append(f"    - {r['code']}: {r['message']}")
    return "\n".join(lines)

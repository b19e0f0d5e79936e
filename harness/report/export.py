"""A run laid out as InferenceX's artifacts, so InferenceX-app's discovery finds them.

For every point directory holding `point_result.json` and its published row, under OUT:

- `bmk_agentic_<result name>/<result name>.json`: the published AgentX row, unchanged;
- `agentic_<result name>/aiperf_artifacts/…`: AIPerf's files (without `inputs.json` and
  `profile_export_raw.jsonl`, which InferenceX does not upload either);
- `server_logs_<result name>/server.log`;
- `gpu_metrics_<result name>/gpu_metrics.csv` and `agentic_power_timezone_offset.txt`, when sampled;
- `eval_<name>/…`: each `eval_row_*.json` (InferenceX `EvalRow`) and its `meta_env.json`, when evals exist.

`<result name>` is the row's file name without `.json` (`bmk_agentic_` removed). Files are copied,
never rewritten. Only publishable points are exported (`harness.point.publishable`: AIPerf's submission verdict
and ours); `include_unofficial` exports the others too (smoke runs, simulated points).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from harness.errors import UserError

RECORD_FILE = "point_result.json"
SKIPPED_AIPERF = {"inputs.json", "profile_export_raw.jsonl"}


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)


def export_point(pdir: Path, out: Path) -> list[Path]:
    record = json.loads((pdir / RECORD_FILE).read_text())
    row_file = pdir / str(record.get("row") or "")
    if not row_file.is_file():
        raise UserError(f"{pdir}: no published row beside {RECORD_FILE} (expected {record.get('row')})")
    name = row_file.stem.removeprefix("bmk_agentic_")
    written = [out / f"bmk_agentic_{name}" / row_file.name]
    _copy(row_file, written[0])
    aiperf = pdir / "aiperf"
    if aiperf.is_dir():
        for root, _dirs, files in os.walk(aiperf):
            for f in files:
                if f in SKIPPED_AIPERF:
                    continue
                src = Path(root) / f
                dst = out / f"agentic_{name}" / "aiperf_artifacts" / src.relative_to(aiperf)
                _copy(src, dst)
                written.append(dst)
    for src, dst in ((pdir / "server.log", out / f"server_logs_{name}" / "server.log"),
                     (pdir / "gpu_metrics.csv", out / f"gpu_metrics_{name}" / "gpu_metrics.csv"),
                     (pdir / "agentic_power_timezone_offset.txt",
                      out / f"gpu_metrics_{name}" / "agentic_power_timezone_offset.txt")):
        if src.is_file():
            _copy(src, dst)
            written.append(dst)
    return written


def export_evals(run_dir: Path, out: Path) -> list[Path]:
    written = []
    for row in sorted(run_dir.rglob("eval_row_*.json")):
        dst_dir = out / f"eval_{row.parent.name}"
        for src in (row, row.parent / "meta_env.json"):
            if src.is_file():
                _copy(src, dst_dir / src.name)
                written.append(dst_dir / src.name)
    return written


def is_publishable(pdir: Path) -> bool:
    """Whether the point's record says it may be published."""
    from harness.point.publishable import of

    record = json.loads((pdir / RECORD_FILE).read_text())
    return isinstance(record, dict) and bool(of(record)["publishable"])


def export_inferencex(run_dir: Path, out: Path, include_unofficial: bool = False) -> tuple[list[Path], list[Path]]:
    """Export every publishable point (every point with `include_unofficial`) and every eval found under
    `run_dir`; returns (the files written, the point directories left out)."""
    if not run_dir.is_dir():
        raise UserError(f"{run_dir}: no such directory (expected a run directory)")
    points = sorted({p.parent for p in run_dir.rglob(RECORD_FILE)})
    if not points:
        raise UserError(f"{run_dir}: no point directories found (expected {RECORD_FILE} below it)")
    left_out = [] if include_unofficial else [p for p in points if not is_publishable(p)]
    written: list[Path] = []
    for pdir in points:
        if pdir not in left_out:
            written.extend(export_point(pdir, out))
    written.extend(export_evals(run_dir, out))
    return written, left_out

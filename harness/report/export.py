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

import os
import shutil
import stat
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.json_input import read_json_object
from harness.yaml_input import short

RECORD_FILE = "point_result.json"
SKIPPED_AIPERF = {"inputs.json", "profile_export_raw.jsonl"}


def _copy(src: Path, dst: Path) -> None:
    """Copy one regular file (a symlink, FIFO or device is refused: copying one could read without end)."""
    try:
        mode = os.lstat(src).st_mode
    except OSError as exc:
        raise UserError(f"{src}: cannot read it for the export: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise UserError(f"{src}: not a regular file (a symlink, FIFO or device); not exported")
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copy2(src, dst, follow_symlinks=False)
    except OSError as exc:
        raise UserError(f"{src}: cannot copy it to {dst}: {exc.strerror or exc}") from None


def published_row(pdir: Path) -> tuple[dict[str, Any], Path]:
    """The point's record and the published row file it names; a foreign or broken record is a UserError."""
    record = read_json_object(pdir / RECORD_FILE, "point record")
    row = record.get("row")
    if not isinstance(row, str) or not row:
        raise UserError(f"{pdir / RECORD_FILE}: row: expected the published row's file name, got {short(row)}")
    row_file = pdir / row
    if not row_file.is_file():
        raise UserError(f"{pdir}: no published row beside {RECORD_FILE} (expected {record.get('row')})")
    return record, row_file


def export_point(pdir: Path, out: Path) -> list[Path]:
    _, row_file = published_row(pdir)
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


def export_inferencex(run_dir: Path, out: Path, include_unofficial: bool = False) -> tuple[list[Path], list[Path]]:
    """Export every publishable point (every point with `include_unofficial`) and every eval found under
    `run_dir`; returns (the files written, the point directories left out)."""
    if not run_dir.is_dir():
        raise UserError(f"{run_dir}: no such directory (expected a run directory)")
    points = sorted({p.parent for p in run_dir.rglob(RECORD_FILE)})
    if not points:
        raise UserError(f"{run_dir}: no point directories found (expected {RECORD_FILE} below it)")
    from harness.point.publishable import of

    records = {p: published_row(p)[0] for p in points}   # every record is checked, exported or not
    left_out = [] if include_unofficial else [p for p in points if not of(records[p])["publishable"]]
    written: list[Path] = []
    for pdir in points:
        if pdir not in left_out:
            written.extend(export_point(pdir, out))
    written.extend(export_evals(run_dir, out))
    return written, left_out

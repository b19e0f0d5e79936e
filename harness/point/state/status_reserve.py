"""Room for a point's last status on a full disk.

`StatusReserve` is a small file made in the point's directory when the point starts; on a full disk the
final status is written into its blocks, cut to length and renamed over `status.json`: no new data block is
needed. Where even that fails (a copy-on-write filesystem needs new blocks to overwrite), the reserve is
deleted and the blocks it frees take an ordinary write.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from harness import SCHEMA_VERSION
from harness.artifacts import json_text, sync_dir, write_json

RESERVE_FILE = ".status.reserve"
RESERVE_BYTES = 64 * 1024


class StatusReserve:
    """Room for the last write of `status.json` on a full disk (see the module docstring)."""

    def __init__(self, point_dir: Path):
        self.path = Path(point_dir) / RESERVE_FILE

    def make(self) -> None:
        with open(self.path, "wb") as fh:
            fh.write(os.urandom(RESERVE_BYTES))   # incompressible: a compressing filesystem allocates it too
            fh.flush()
            os.fsync(fh.fileno())

    def write_json(self, target: Path, data: dict[str, Any]) -> None:
        """Write `data` as `target` (with `schema_version` and secrets redacted, like
        `harness.artifacts.write_json`) through the reserve's blocks; with no reserve left, an ordinary write."""
        body = (json_text({"schema_version": SCHEMA_VERSION, **{k: v for k, v in data.items()
                                                                 if k != "schema_version"}}) + "\n").encode()
        if len(body) <= RESERVE_BYTES:
            try:
                fd = os.open(self.path, os.O_WRONLY)
                try:
                    view = memoryview(body)
                    while view:
                        view = view[os.write(fd, view):]
                    os.ftruncate(fd, len(body))
                    os.fsync(fd)
                finally:
                    os.close(fd)
                os.chmod(self.path, 0o644)
                os.replace(self.path, target)
                sync_dir(target.parent)
                return
            except OSError:
                pass
        self.release()
        write_json(target, data)

    def release(self) -> None:
        self.path.unlink(missing_ok=True)

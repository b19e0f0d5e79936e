"""A point's results that cannot be written: its filesystem turned read-only (EROFS), failed (EIO, ESTALE on a
network mount) or its directory vanished (ENOENT) while the point ran.

`unwritable_error` finds such an error in an exception or what caused it (a read-only filesystem wherever it is
met; the others only on a path below the results directory, so a missing input stays an input error);
`record_unwritable` ends the point `failed: results_unwritable: <errno name> writing <path>` in `status.json`
where that can still be written, and says so in one line on stderr either way.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.point.state.status import PointStatus

ANYWHERE_ERRNOS = (errno.EROFS,)
BELOW_RESULTS_ERRNOS = (errno.EROFS, errno.EIO, errno.ENOENT, errno.ESTALE)


def unwritable_error(exc: BaseException, results: Path) -> OSError | None:
    """The error in `exc` or the chain that led to it that says the results below `results` cannot be written."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, OSError) and (current.errno in ANYWHERE_ERRNOS or (
                current.errno in BELOW_RESULTS_ERRNOS and _below(current.filename, results))):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _below(filename: object, results: Path) -> bool:
    if not isinstance(filename, (str, bytes, os.PathLike)):
        return False
    path = Path(os.fsdecode(filename)).absolute()
    return path.is_relative_to(Path(results).absolute())


def unwritable_reason(err: OSError, point_dir: Path) -> str:
    """`results_unwritable: EROFS writing <path>`."""
    name = errno.errorcode.get(err.errno or 0, str(err.errno))
    target = os.fsdecode(err.filename) if isinstance(err.filename, (str, bytes, os.PathLike)) else str(point_dir)
    return f"results_unwritable: {name} writing {target}"


def record_unwritable(err: OSError, point_dir: Path, status: PointStatus, exit_status: int) -> str:
    """`failed: results_unwritable` in `status.json` if it can still be written, and one line on stderr that
    says whether it was; returns the reason."""
    reason = unwritable_reason(err, point_dir)
    try:
        status.finish("failed", reason, exit_status)
        recorded = f"{status.path}: failed"
    except OSError as exc:
        recorded = f"{status.path} could not be written either ({exc.strerror or exc})"
    print(f"error: {reason} ({err.strerror or err}); the point is stopped, {recorded}", file=sys.stderr, flush=True)
    return reason

"""Which harness produced a result: its git commit, recorded in every result and shown in reports.

`HARNESS_GIT_COMMIT` wins (set it where the harness is installed from a checkout without `.git`, e.g.
`pip install .` in CI: `HARNESS_GIT_COMMIT=$GITHUB_SHA`); else `git rev-parse HEAD` of the source tree the
`harness` package was imported from, with `dirty: true` when tracked files differ from that commit.
Absent commits carry the reason.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from pathlib import Path
from typing import Any

_SHA = re.compile(r"^[0-9a-f]{7,40}$")


@functools.lru_cache(maxsize=1)
def harness_commit() -> dict[str, Any]:
    """`{"commit", "dirty", "source"}` or `{"commit": None, "reason"}`."""
    env = os.environ.get("HARNESS_GIT_COMMIT", "").strip().lower()
    if env:
        if _SHA.match(env):
            return {"commit": env, "dirty": None, "source": "HARNESS_GIT_COMMIT"}
        return {"commit": None, "reason": f"HARNESS_GIT_COMMIT={env[:60]!r} is not a commit id"}
    root = Path(__file__).resolve().parent.parent
    if not (root / ".git").exists():
        return {"commit": None, "reason": f"{root} is not a git checkout (set HARNESS_GIT_COMMIT)"}
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=False)
        if head.returncode != 0:
            return {"commit": None, "reason": f"git rev-parse HEAD failed: {head.stderr.strip()[:200]}"}
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"commit": None, "reason": f"git not usable: {exc}"}
    return {"commit": head.stdout.strip(), "dirty": bool(dirty.stdout.strip()) if dirty.returncode == 0 else None,
            "source": "git"}

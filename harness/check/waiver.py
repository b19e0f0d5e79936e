"""A recorded waiver: the file a check rule writes beside a curve's results when its FAIL is waived."""

from __future__ import annotations

import getpass
import time
from pathlib import Path
from typing import Any

from harness.artifacts import write_json


def record_waiver(path: Path, *, config_key: str, rule: str, reason: str | None, waived: str,
                  **extra: Any) -> None:
    """Write who waived what, when and why (reviewed later beside the results)."""
    write_json(path, {"config_key": config_key, "rule": rule, "reason": reason, "waived": waived, **extra,
                      "by": getpass.getuser(), "at_ns": time.time_ns()})

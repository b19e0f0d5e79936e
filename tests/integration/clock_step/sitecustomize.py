"""A wall-clock step for the fault tests: in every Python process started with this directory on PYTHONPATH, once
the file named by HARNESS_TEST_CLOCK_STEP_FILE exists, `time.time()` and `time.time_ns()` read
HARNESS_TEST_CLOCK_STEP_S seconds (default 3600) ahead, as after an NTP step; the monotonic clock is untouched."""

import os
import time

_TRIGGER = os.environ.get("HARNESS_TEST_CLOCK_STEP_FILE")
if _TRIGGER:
    _real_ns = time.time_ns
    _step_ns = int(float(os.environ.get("HARNESS_TEST_CLOCK_STEP_S", "3600")) * 1e9)
    _state = {"checked": 0.0, "stepped": False}

    def _stepped() -> bool:
        if not _state["stepped"]:
            now = time.monotonic()
            if now - _state["checked"] > 0.05:
                _state["checked"] = now
                _state["stepped"] = os.path.exists(_TRIGGER)
        return bool(_state["stepped"])

    def _time_ns() -> int:
        return _real_ns() + (_step_ns if _stepped() else 0)

    def _time() -> float:
        return _time_ns() / 1e9

    time.time_ns = _time_ns
    time.time = _time

"""A reused deployment's record counts the points on that deployment: after a failed deployment is stopped,
the point that starts the next one is its first (not reused)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from harness.point.servers import deployment_reuse


class FakeDeployment:
    """Stands in for a deployment's processes: a token, and stop() (nothing is launched)."""

    tokens = itertools.count(1)

    def __init__(self, plan: Any, pdir: Path, launcher: str, **_: Any):
        self.token = f"dep{next(self.tokens)}"

    def stop(self, grace_s: float, status: Any = None) -> None:
        pass


def test_the_point_that_starts_a_fresh_deployment_is_not_reused(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deployment_reuse, "DeploymentServer", FakeDeployment)
    monkeypatch.setattr(deployment_reuse, "scrub_logs", lambda pdir: None)
    shared = deployment_reuse.SharedDeployment()

    def record(name: str) -> dict[str, Any]:
        return shared.for_point(None, tmp_path / name, "local", (), None).run_record   # type: ignore[arg-type]

    first, second = record("conc1"), record("conc2")
    assert (first["reused"], second["reused"]) == (False, True)
    assert first["deployment_id"] == second["deployment_id"]
    shared.stop(1.0)                             # the deployment failed under conc2; the sweep goes on
    third, fourth = record("conc4"), record("conc8")
    assert (third["reused"], third["point_order"]) == (False, 1)
    assert (fourth["reused"], fourth["point_order"]) == (True, 2)
    assert third["started_in"] == str(tmp_path / "conc4") and third["deployment_id"] != first["deployment_id"]

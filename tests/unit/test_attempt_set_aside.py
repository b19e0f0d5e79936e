"""A point directory's earlier attempt is set aside whole, named by the id its status recorded, or, where it left no
readable status (a crash before the first status write, a corrupt one), by when its directory was written."""

from __future__ import annotations

import re
from pathlib import Path

from harness.point.state.attempt import set_aside


def test_an_attempt_without_a_status_is_set_aside_by_its_time(tmp_path: Path) -> None:
    (tmp_path / "server.log").write_text("started\n")
    target = set_aside(tmp_path)
    assert target is not None and re.fullmatch(r"earlier-\d{8}T\d{6}Z", target.name)
    assert (target / "server.log").read_text() == "started\n" and not (tmp_path / "server.log").exists()


def test_an_attempt_with_a_corrupt_status_is_set_aside_by_its_time(tmp_path: Path) -> None:
    (tmp_path / "status.json").write_text("{not json")
    target = set_aside(tmp_path)
    assert target is not None and target.name.startswith("earlier-") and (target / "status.json").is_file()


def test_an_attempt_is_set_aside_under_the_id_it_recorded(tmp_path: Path) -> None:
    (tmp_path / "status.json").write_text('{"attempt": "a1b2", "state": "failed"}')
    target = set_aside(tmp_path)
    assert target is not None and target.name == "a1b2"

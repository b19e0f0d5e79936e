"""Session stickiness from the simulator's routed lines."""

from __future__ import annotations

from pathlib import Path

from harness.point.record.stickiness import UNMEASURED, stickiness
from harness.sim.batching.topology.dprank import routed_line


def test_sticky_share_weights_each_sessions_top_share_by_its_turns(tmp_path: Path) -> None:
    a = tmp_path / "a.log"
    b = tmp_path / "b.log"
    a.write_text("\n".join([
        "The server is fired up and ready to roll!",
        routed_line("s1", 0), routed_line("s1", 0), routed_line("s1", 0),   # s1: 3 of 4 on (a, 0)
        routed_line("s2", 1), routed_line("s2", 2),                         # s2: 1 of 2 on each
        "[2026-12-01 10:00:00] " + routed_line("s 3/x", 3),                 # a key with a space, behind a prefix
    ]) + "\n")
    b.write_text(routed_line("s1", 0) + "\n" + routed_line("s 3/x", 3) + "\n")
    got = stickiness({"a": a, "b": b})
    # s1 4 turns, top 3 (a,0); s2 2 turns, top 1; "s 3/x" 2 turns on (a,3) and (b,3): top 1
    assert got == {"sessions": 3, "turns": 8, "sticky_share": 5 / 8, "fully_sticky_sessions": 0.0, "targets": 6}


def test_fully_sticky_sessions_and_share_one(tmp_path: Path) -> None:
    log = tmp_path / "w.log"
    log.write_text("".join(routed_line(k, r) + "\n" for k, r in [("x", 1), ("y", 2), ("x", 1), ("z", 1)]))
    assert stickiness({"w": log}) == {"sessions": 3, "turns": 4, "sticky_share": 1.0,
                                      "fully_sticky_sessions": 1.0, "targets": 2}


def test_no_routed_line_is_unmeasured_with_a_reason(tmp_path: Path) -> None:
    log = tmp_path / "w.log"
    log.write_text("[2026-12-01 10:00:00] Decode batch. #running-req: 3\n")
    assert stickiness({"w": log, "gone": tmp_path / "missing.log"}) == {"reason": UNMEASURED}
    assert stickiness({}) == {"reason": UNMEASURED}

"""The console lines docs/search.md quotes are lines the search prints: each reason a quoted tested point or answer
gives has the shape (its numbers aside) of a reason the search's own code gives for a point of that kind."""

from __future__ import annotations

import re
from pathlib import Path

from harness.search import tested as search_tested
from harness.search.slo import parse_slo
from harness.search.spread import interval_of
from harness.search.tested import Check, TestedPoint

ROOT = Path(__file__).resolve().parents[2]
SLO = parse_slo("ttft_p90<=0.5")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")
LINE = re.compile(r"^\[search\] c\d+: (meets the SLO|does not meet the SLO|inconclusive) \((.*)\)$")
INSIDE = re.compile(r"c\d+ inconclusive \((.*?)\)(?=, c\d+ inconclusive|; c\d+ meets|; --max| *$)")


def shape(text: str) -> str:
    return NUMBER.sub("N", text)


def judged(ttfts: list[float], conc: int = 4, invalid: tuple[str, ...] = (), achieved: float = 4.0) -> TestedPoint:
    value = sorted(ttfts)[int(0.9 * (len(ttfts) - 1))]
    check = Check(SLO, value, interval_of(ttfts, 0.9))
    return TestedPoint(conc, Path(f"/runs/conc{conc}"), "completed", not invalid, invalid, (check,), None, "fake",
                       achieved, len(ttfts), 30.0)


def printed_reasons() -> set[str]:
    """The shapes of every reason `search_tested.tested_line` gives for points of each kind the docs quote."""
    few = [0.1 + 0.01 * i for i in range(12)]
    points = [
        judged(few),                                                  # inconclusive: unbounded above
        judged(few[:4], invalid=("too_few_completed",)),              # ... and invalid for its sample
        judged([0.2 + 0.0065 * i for i in range(50)]),               # inconclusive: bounded, threshold inside
        judged([0.1 + 0.001 * i for i in range(50)]),                 # pass
        judged([2.0 + 0.1 * i for i in range(30)]),                   # fail
        judged([2.0 + 0.1 * i for i in range(30)], conc=8, achieved=2.0),   # clear breach below its load
        judged(few, conc=8, achieved=2.0),                            # low load
    ]
    out: set[str] = set()
    for p in points:
        match = LINE.match(search_tested.tested_line(p))
        assert match is not None, search_tested.tested_line(p)
        out.update(shape(part) for part in match.group(2).split("; "))
    return out


def quoted_lines() -> list[str]:
    text = (ROOT / "docs" / "search.md").read_text()
    return [line for block in re.findall(r"```\n(.*?)```", text, re.S) for line in block.splitlines()
            if line.startswith("[search] c") or line.startswith("answer: ")]


def test_every_reason_the_docs_quote_for_a_tested_point_is_one_the_search_prints() -> None:
    known = printed_reasons()
    lines = [m for m in map(LINE.match, quoted_lines()) if m]
    assert len(lines) >= 3
    for m in lines:
        for part in m.group(2).split("; "):
            assert part == "..." or shape(part) in known, part   # "...": reasons the docs leave out


def test_the_answers_the_docs_quote_give_the_reasons_the_search_prints() -> None:
    known = printed_reasons()
    answers = [line for line in quoted_lines() if line.startswith("answer: ")]
    assert answers
    for line in answers:
        assert line.startswith(("answer: UNCERTAIN: the boundary lies between ", "answer: c")), line
        for reasons in INSIDE.findall(line):
            for part in reasons.split("; "):
                assert shape(part) in known, part

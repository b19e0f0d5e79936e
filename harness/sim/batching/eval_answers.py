"""Eval answering: the simulator recognises a known problem in a chat prompt and answers it.

`--sim-eval-answers FILE` is a JSON-lines file of `{"question", "answer"}` records whose answer is a worked
solution ending in `#### <number>` (the shipped GSM8K test split, `harness/evals/gsm8k/test.jsonl`).
A chat request whose last user message contains one of the questions gets that worked solution
(calculator annotations `<<...>>` removed) as its output, one word per token, streamed at the engine's
pace like any other output. With probability `--sim-eval-accuracy` P the final number is the right
one; otherwise it is a different number. The draw is seeded per problem (seed, problem index), so the
same problems are answered wrongly whatever the order or concurrency of the requests; over n problems
the score is Binomial(n, P) / n. Prompts that contain no known question get the usual synthetic text.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_ANNOTATION = re.compile(r"<<[^>]*>>")
_FINAL = re.compile(r"####\s*(?P<num>[^\n]*)\s*$")
_TOKEN = re.compile(r"\s*\S+")


@dataclass(frozen=True)
class Problem:
    index: int
    question: str
    solution: str      # worked solution without calculator annotations
    final: str         # the number after `####`


def load_problems(path: Path) -> list[Problem]:
    """Read the answers file; a record without a `#### <number>` answer is an error naming its line."""
    problems: list[Problem] = []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                question, answer = str(rec["question"]).strip(), str(rec["answer"])
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{path}:{lineno}: expected a JSON object with question and answer ({exc})") from None
            solution = _ANNOTATION.sub("", answer).strip()
            m = _FINAL.search(solution)
            if not m or not question:
                raise ValueError(f"{path}:{lineno}: the answer does not end in '#### <number>'")
            problems.append(Problem(len(problems), question, solution, m.group("num").strip()))
    if not problems:
        raise ValueError(f"{path}: no problems")
    return problems


def wrong_number(final: str, rng: random.Random) -> str:
    """A number different from `final` (a nearby integer, or a changed one when `final` is not numeric)."""
    try:
        value = int(float(final.replace(",", "").replace("$", "")))
    except ValueError:
        return str(rng.randint(1, 1000))
    return str(value + rng.choice([-1, 1]) * rng.randint(1, 9))


def tokens_of(text: str) -> list[str]:
    """Output tokens of an answer: each word with the whitespace before it."""
    return _TOKEN.findall(text)


class EvalAnswers:
    """The problems of an answers file and the seeded right/wrong draw of each."""

    def __init__(self, problems: list[Problem], accuracy: float, seed: int):
        if not 0.0 <= accuracy <= 1.0:
            raise ValueError(f"accuracy must be in [0, 1], got {accuracy}")
        self.problems = problems
        self.accuracy = accuracy
        self.seed = seed

    @classmethod
    def from_file(cls, path: str | Path, accuracy: float, seed: int) -> EvalAnswers:
        return cls(load_problems(Path(path)), accuracy, seed)

    def find(self, messages: list[Any]) -> Problem | None:
        """The known problem whose question ends last in the last user message, if any."""
        text = _last_user_text(messages)
        if not text:
            return None
        best: tuple[int, Problem] | None = None
        for p in self.problems:
            at = text.rfind(p.question)
            if at >= 0:
                end = at + len(p.question)
                if best is None or end > best[0]:
                    best = (end, p)
        return None if best is None else best[1]

    def correct(self, problem: Problem) -> bool:
        return random.Random(f"{self.seed}:{problem.index}").random() < self.accuracy

    def answer(self, problem: Problem) -> str:
        """The worked solution, its final number replaced by a wrong one when the draw says so."""
        if self.correct(problem):
            return problem.solution
        rng = random.Random(f"{self.seed}:{problem.index}:wrong")
        head = problem.solution[: problem.solution.rfind("####")]
        return f"{head}#### {wrong_number(problem.final, rng)}"


def _last_user_text(messages: list[Any]) -> str:
    for msg in reversed(messages):
        if isinstance(msg, dict) and msg.get("role") == "user":
            content = msg.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return ""
    return ""

"""The simulator's eval answering: recognising a shipped problem, the seeded right/wrong draw."""

import re

import pytest

from harness.evals.plan import SIM_ANSWERS
from harness.sim.batching.eval_answers import EvalAnswers, load_problems, tokens_of

PROBLEMS = load_problems(SIM_ANSWERS["gsm8k"])


def _prompt(p, shots=()):
    text = "".join(f"Question: {s.question}\nAnswer: {s.solution}\n\n" for s in shots)
    return [{"role": "system", "content": "be brief"},
            {"role": "user", "content": text + f"Question: {p.question}\nEnd your response with ...\nAnswer:"}]


def test_loads_the_shipped_test_split():
    assert len(PROBLEMS) == 1319
    assert PROBLEMS[0].final == "18" and "<<" not in PROBLEMS[0].solution
    assert PROBLEMS[0].solution.endswith("#### 18")


def test_finds_the_last_question_in_the_prompt():
    a = EvalAnswers(PROBLEMS, 1.0, 0)
    assert a.find(_prompt(PROBLEMS[7], shots=PROBLEMS[100:105])) is PROBLEMS[7]
    assert a.find([{"role": "user", "content": "write a poem"}]) is None
    assert a.find([{"role": "assistant", "content": PROBLEMS[3].question}]) is None


def test_accuracy_one_and_zero():
    right, wrong = EvalAnswers(PROBLEMS, 1.0, 0), EvalAnswers(PROBLEMS, 0.0, 0)
    for p in PROBLEMS[:50]:
        assert right.answer(p) == p.solution
        final = re.search(r"#### (.*)$", wrong.answer(p)).group(1)
        assert final != p.final and wrong.answer(p).startswith(p.solution[: p.solution.rfind("####")])


def test_draw_is_seeded_per_problem_and_near_p():
    a, b = EvalAnswers(PROBLEMS, 0.7, 3), EvalAnswers(PROBLEMS, 0.7, 3)
    assert [a.correct(p) for p in PROBLEMS] == [b.correct(p) for p in reversed(PROBLEMS)][::-1]
    share = sum(a.correct(p) for p in PROBLEMS) / len(PROBLEMS)
    assert abs(share - 0.7) < 4 * (0.7 * 0.3 / len(PROBLEMS)) ** 0.5
    assert [a.correct(p) for p in PROBLEMS] != [EvalAnswers(PROBLEMS, 0.7, 4).correct(p) for p in PROBLEMS]


def test_tokens_rebuild_the_text():
    text = PROBLEMS[5].solution
    assert "".join(tokens_of(text)) == text.rstrip()
    assert all(t.strip() for t in tokens_of(text))


def test_bad_answers_file(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text('{"question": "q", "answer": "no final line"}\n')
    with pytest.raises(ValueError, match=r"a.jsonl:1: the answer does not end"):
        load_problems(f)
    with pytest.raises(ValueError, match="accuracy must be in"):
        EvalAnswers(PROBLEMS, 1.5, 0)

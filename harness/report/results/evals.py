"""The accuracy eval of each curve in a report: the newest `eval_result.json` per config key.

A curve's eval gate is PASS (completed, score at or above its threshold on the whole test split), PARTIAL
(the same on the part a `--limit N` left in: a smoke run, `[partial: --limit N]`), FAIL (completed below it),
FAILED (the eval itself failed or was cancelled: no score) or MISSING (no eval found under the report's
directories). `harness check --results` gates on the same word (`EvalSummary.gate`): only PASS passes.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.evals.lmeval_client import TASK_DIRS, test_split_size
from harness.inputs.json_input import JsonFields, read_json_object
from harness.point.state.attempt import current_only

RESULT_FILE = "eval_result.json"


@dataclass(frozen=True)
class EvalSummary:
    config_key: str
    conc: int
    task: str
    state: str
    reason: str | None
    score: float | None
    score_name: str | None
    score_se: float | str | None
    n_eff: float | None
    min_score: float
    threshold_source: str
    passed: bool | None
    simulated: bool
    path: Path
    ended_ns: int
    limit: int | None = None    # `--limit N`
    partial: bool = False       # the limit left part of the test split out: a smoke run, not an acceptance

    @property
    def gate(self) -> str:
        """The one judgement the report prints and `harness check` gates on: PASS only for an eval that
        completed at or above its threshold on the whole test split; PARTIAL for one that did so on part of it
        only (`--limit N`: a smoke run, not an acceptance); FAIL below the threshold; FAILED without a score."""
        if self.passed is True:
            return "PARTIAL" if self.partial else "PASS"
        if self.passed is False:
            return "FAIL"
        return "FAILED"

    @property
    def accepted(self) -> bool:
        return self.gate == "PASS"


def find_eval_results(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_file() and p.name == RESULT_FILE:
            out.append(p)
        elif p.is_dir():
            out.extend(current_only(sorted(p.glob(f"**/{RESULT_FILE}")), p))   # not an earlier attempt's
    return out


def _read(path: Path) -> EvalSummary | None:
    """The eval result at `path` as a typed summary; None for a file that is not one of ours (unreadable, or a
    required field missing or of the wrong type), which the report leaves out."""
    try:
        f = JsonFields(read_json_object(path, "eval result"), path)
        status = JsonFields(read_json_object(path.parent / "status.json", "eval status")
                            if (path.parent / "status.json").exists() else {}, path.parent / "status.json")
        min_score, passed = f.number("min_score"), f.get("passed")
        if min_score is None or (passed is not None and not isinstance(passed, bool)):
            return None
        se = f.number("score_se")
        return EvalSummary(
            config_key=f.require_str("config_key"), conc=f.require_int("conc"), task=f.require_str("task"),
            state=f.require_str("state"), reason=f.text("state_reason"), score=f.number("score"),
            score_name=f.text("score_name"), score_se=se if se is not None else f.text("score_se"),
            n_eff=f.number("n_eff"), min_score=min_score, threshold_source=f.text("threshold_source") or "",
            passed=passed, simulated=f.boolean("simulated") is True, path=path,
            ended_ns=status.integer("ended_ns") or path.stat().st_mtime_ns,
            limit=f.integer("limit"), partial=_partial(d=f.data))
    except (UserError, OSError):
        return None  # not an eval result of ours: left out of the report


def _partial(d: Mapping[str, Any]) -> bool:
    """Did the eval leave part of the test split out? (Recorded as `partial`; judged from `limit` for an
    `eval_result.json` written before it was.)"""
    if "partial" in d:
        return bool(d["partial"])

    limit, task = d.get("limit"), d.get("task")
    return (isinstance(limit, int) and not isinstance(limit, bool) and isinstance(task, str) and task in TASK_DIRS
            and limit < test_split_size(task))


def newest_evals(paths: Iterable[Path]) -> dict[str, EvalSummary]:
    """config_key -> its newest eval (by the time the eval ended)."""
    out: dict[str, EvalSummary] = {}
    for path in find_eval_results(paths):
        s = _read(path)
        if s is not None and (s.config_key not in out or s.ended_ns > out[s.config_key].ended_ns):
            out[s.config_key] = s
    return out


def eval_line(s: EvalSummary | None, simulated: bool = False) -> str:
    """One line: score, threshold and gate (or why there is none). Without an eval a real curve is MISSING
    one (`harness check --results` fails it); a simulated curve (a demo, a dry run) simply has none. Plain text
    (no Markdown): the same words go into the terminal, `report.md` and the HTML table's cell."""
    if s is None and simulated:
        return "accuracy eval: not run (simulated curve; harness eval RECIPE, or harness sweep RECIPE --with-eval, adds one)"
    if s is None:
        return "accuracy eval: MISSING (no eval_result.json; run harness eval RECIPE or harness sweep RECIPE --with-eval)"
    sim = " [simulated]" if s.simulated else ""
    if s.score is None:
        return (f"accuracy eval: FAILED at c{s.conc} {s.task}: {s.state} ({s.reason}); threshold "
                f"{s.min_score:.2f}{sim}")
    se = f" ± {s.score_se:.4f}" if isinstance(s.score_se, int | float) else ""
    n = f", n={int(s.n_eff)}" if isinstance(s.n_eff, int | float) else ""
    partial = f" [partial: --limit {s.limit}]" if s.partial else ""
    return (f"accuracy eval: {s.gate} at c{s.conc} {s.task} {s.score_name} {s.score:.4f}{se}{n}; threshold "
            f"{s.min_score:.2f} ({s.threshold_source}){partial}{sim}")


def eval_lines(config_keys: Sequence[str], evals: Mapping[str, EvalSummary], simulated: bool = False) -> list[str]:
    """`eval_line` of each config key of a curve, led by the key where the curve holds more than one."""
    if len(config_keys) == 1:
        return [eval_line(evals.get(config_keys[0]), simulated)]
    return [f"{k}: {eval_line(evals.get(k), simulated)}" for k in config_keys]


def eval_json(s: EvalSummary | None) -> dict[str, Any] | None:
    if s is None:
        return None
    return {"gate": s.gate, "conc": s.conc, "task": s.task, "state": s.state, "reason": s.reason,
            "score": s.score, "score_name": s.score_name, "score_se": s.score_se, "n_eff": s.n_eff,
            "min_score": s.min_score, "threshold_source": s.threshold_source, "limit": s.limit, "partial": s.partial,
            "simulated": s.simulated, "path": str(s.path)}


def eval_markdown(config_keys: Mapping[str, bool], evals: dict[str, EvalSummary]) -> str:
    """One row per config key; `config_keys` maps each to whether all its curves are simulated."""
    lines = ["## Accuracy evals", "", "| curve | gate |", "|---|---|"]
    lines += [f"| {k} | {eval_line(evals.get(k), sim).removeprefix('accuracy eval: ')} |"
              for k, sim in config_keys.items()]
    return "\n".join(lines) + "\n"


def eval_html(config_keys: Mapping[str, bool], evals: dict[str, EvalSummary]) -> str:
    rows = "".join(f"<tr><td>{html.escape(k)}</td>"
                   f"<td>{html.escape(eval_line(evals.get(k), sim).removeprefix('accuracy eval: '))}</td></tr>"
                   for k, sim in config_keys.items())
    return f"<h2>Accuracy evals</h2><table><tr><th>curve</th><th>gate</th></tr>{rows}</table>"

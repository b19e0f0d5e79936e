"""Whether a point's result may be published: AIPerf's submission check and our validity verdict, together.

"valid" is our measurement's validity verdict (`harness.point.record.validity`). "publishable" adds what makes a valid
measurement a submission: AIPerf's own `metadata.submission_valid` (false for a run under `--unsafe-override`,
with its reasons, e.g. `unsafe_override`, `run_cancelled`, `context_overflow_rate_exceeded`), a real engine (a
simulated number is never published), the verified pinned corpus, and the scenario's own warm-up (InferenceX runs
the preset's; AIPerf accepts another per-lane budget, but the window then starts from other trajectory states).
"""

from __future__ import annotations

from typing import Any


def aiperf_submission(summary: dict[str, Any] | None) -> dict[str, Any] | None:
    """AIPerf's scenario check from `profile_export_aiperf.json`'s `metadata`, as AIPerf wrote it (None: absent)."""
    meta = (summary or {}).get("metadata")
    if not isinstance(meta, dict):
        return None
    keys = ("submission_valid", "submission_invalid_reasons", "scenario", "dataset")
    found = {k: meta[k] for k in keys if k in meta}
    return found if "submission_valid" in found else None


def assess(result: dict[str, Any]) -> dict[str, Any]:
    """`{"publishable": bool, "reasons": [{code, message}], "label": str}` for a result record."""
    reasons: list[dict[str, str]] = []
    submission = result.get("aiperf_submission")
    listed = _mapping(submission).get("submission_invalid_reasons")
    aiperf_reasons = [str(r) for r in listed] if isinstance(listed, list) else []
    if not isinstance(submission, dict):
        reasons.append({"code": "no_aiperf_verdict", "message": "AIPerf's metadata holds no submission check"})
    elif submission.get("submission_valid") is not True:
        reasons.append({"code": "aiperf_unofficial",
                        "message": f"AIPerf: submission_valid false ({', '.join(aiperf_reasons) or 'no reason'})"})
    if _mapping(result.get("validity")).get("valid") is not True:
        reasons.append({"code": "invalid", "message": "the measurement is not valid"})
    if result.get("simulated"):
        reasons.append({"code": "simulated", "message": "measured on the simulator"})
    client = _mapping(result.get("client"))
    corpus = _mapping(client.get("corpus"))
    if "pinned" in corpus and not corpus.get("verified"):
        reasons.append({"code": "corpus_unverified",
                        "message": f"the staged corpus is not verified ({corpus.get('source') or 'unknown source'})"})
    budget = client.get("warmup_requests_per_lane")
    if budget is not None:
        reasons.append({"code": "warmup_not_preset",
                        "message": f"a warm-up budget of {budget} calls per lane instead of the scenario's own"})
    if client.get("burst_phase_starts"):
        reasons.append({"code": "burst_starts",
                        "message": "every lane started the window at once instead of at its recorded spacing"})
    return {"publishable": not reasons, "reasons": reasons, "label": label(not reasons, reasons, aiperf_reasons)}


def _mapping(value: Any) -> dict[str, Any]:
    """A record field that should be an object, or an empty one when it is absent or of another type."""
    return value if isinstance(value, dict) else {}


def label(publishable: bool, reasons: list[dict[str, str]], aiperf_reasons: list[str]) -> str:
    """How tables say it: `publishable`, `unofficial (AIPerf: unsafe_override)`, `not publishable (simulated)`."""
    if publishable:
        return "publishable"
    if "unsafe_override" in aiperf_reasons:
        return f"unofficial (AIPerf: {', '.join(aiperf_reasons)})"
    if any(r["code"] == "aiperf_unofficial" for r in reasons):
        return f"not publishable (AIPerf: {', '.join(aiperf_reasons) or 'submission_valid false'})"
    return f"not publishable ({', '.join(r['code'] for r in reasons)})"


def of(result: dict[str, Any]) -> dict[str, Any]:
    """The record's `publishable` block, or one assessed from it for records written before that block existed."""
    found = result.get("publishable")
    return found if isinstance(found, dict) and isinstance(found.get("publishable"), bool) else assess(result)

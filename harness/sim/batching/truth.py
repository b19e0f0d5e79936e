"""The truth log (`--sim-truth-log PATH`): one JSON line per request, written when it ends.

Timestamps are server-side `time.time_ns()` (comparable with a client on the same host):
`arrival_ns` (request received), `admitted_ns` (first scheduled into a prefill batch),
`first_token_sent_ns` / `last_token_sent_ns` (the write of the first / last content chunk).
`status` is `ok`, `client_disconnected`, `dropped` (--sim-drop-rate), `aborted`, `handover_failed`
(a decode worker got no KV from its prefill worker) or
`injected_error` (--sim-error-rate). Accept counts: `spec_verify_steps` and
`spec_accepted_tokens` (sum of per-step accept lengths, bonus token included).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO

from harness.sim.batching.request import SimRequest


class TruthLog:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] = open(self.path, "a", buffering=1)  # noqa: SIM115 (open for the server's life)

    def write(self, req: SimRequest, status: str) -> None:
        rec = {
            "request_id": req.rid,
            "status": status,
            "arrival_ns": req.arrival_ns,
            "admitted_ns": req.admitted_ns,
            "first_token_sent_ns": req.first_token_sent_ns,
            "last_token_sent_ns": req.last_token_sent_ns,
            "prompt_tokens": req.prompt_tokens,
            "cached_tokens": req.cached_tokens,
            "cached_device_tokens": req.cached_device_tokens,
            "cached_host_tokens": req.cached_host_tokens,
            "completion_tokens": req.output,
            "spec_verify_steps": req.verify_steps,
            "spec_accepted_tokens": req.accepted_tokens,
            "retractions": req.retractions,
            "stream": req.stream,
        }
        self._fh.write(json.dumps(rec, separators=(",", ":")) + "\n")

    def write_error(self, rid: str, arrival_ns: int, status: str) -> None:
        rec = {"request_id": rid, "status": status, "arrival_ns": arrival_ns}
        self._fh.write(json.dumps(rec, separators=(",", ":")) + "\n")

    def close(self) -> None:
        self._fh.close()

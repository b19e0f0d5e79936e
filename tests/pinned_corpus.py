"""A stand-in of the pinned AgentX corpus staged in a datasets cache, for tests.

The content is the shipped synthetic corpus (`recipes/traces/quickstart`), staged under the pinned corpus's name
and commit with `harness traces stage --from-file ... --unverified`, so it is marked unverified: a point replayed
from it is never publishable. Built once per test session and copied where a test needs it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PINNED = "public-dataset:semianalysis_cc_traces_weka_062126@23f152f6f0f9399a85901b89a6458def0ef16729"


@cache
def _built() -> Path:
    from harness.traces.pinned import parse_spec, stage_from_file

    root = Path(tempfile.mkdtemp(prefix="hx-pinned-corpus-"))
    jsonl = root / "traces.jsonl"
    traces = sorted((ROOT / "recipes" / "traces" / "quickstart").glob("*.json"))
    jsonl.write_text("".join(json.dumps(json.loads(t.read_text())) + "\n" for t in traces))
    cache_dir = root / "cache"
    staged = stage_from_file(parse_spec(PINNED), cache_dir, jsonl, allow_unverified=True)
    assert staged.ok and not staged.verified, staged.message
    return cache_dir


def staged_corpus(dest: Path) -> Path:
    """A datasets cache at `dest` holding the stand-in of the pinned corpus; returns `dest`."""
    shutil.copytree(_built(), dest)
    return dest

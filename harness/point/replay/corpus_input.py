"""The trace corpus as AIPerf reads it.

The pinned AgentX corpus goes to AIPerf by name and is read from the staged datasets cache, which must hold it
(`harness.traces.pinned`); the record says which commit and whether the staged content is verified.

The pinned AIPerf's `weka_trace` loader reads a directory of per-trace `*.json` files, so such a directory
is passed through unchanged, after every file in it is validated (regular file, size, trace schema) as the
other forms are: a bad corpus is refused, naming the file, before any server starts. A JSONL file, a single trace file or an `hf:OWNER/NAME@REVISION` dataset
is validated and written out once as such a directory under the cache (keyed by the content of the
traces, so a changed corpus gets a new directory), and the result records that conversion.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from harness.errors import UserError
from harness.recipe.client_plan import ClientPlan
from harness.traces import load_corpus
from harness.traces.files import write_dir
from harness.traces.pinned import check_staged, default_cache, is_pinned_spec, parse_spec


def aiperf_corpus_dir(spec: str, cache_dir: Path) -> tuple[Path, str | None]:
    """(directory AIPerf replays, a note on the conversion or None when the corpus went in unchanged)."""

    corpus = load_corpus(spec)  # hf: specs use the user's hub cache (HF_HUB_CACHE / HF_HOME)
    if not spec.startswith("hf:") and Path(spec).is_dir():
        return Path(spec), None
    traces = [t.model_dump(mode="json") for t in corpus.traces]
    digest = hashlib.sha256(json.dumps(traces, sort_keys=True).encode()).hexdigest()
    out = cache_dir / "corpora" / digest[:16]
    if not out.is_dir():
        tmp = out.with_name(out.name + ".tmp")
        write_dir(corpus, tmp)
        tmp.rename(out)
    kind = "Hugging Face dataset" if spec.startswith("hf:") else "trace file"
    return out, (f"{kind} {spec} written as a directory of per-trace JSON files ({out}): "
                 "AIPerf's weka_trace loader reads only such directories")


def aiperf_corpus(client: ClientPlan, cache_dir: Path) -> tuple[str, dict[str, Any]]:
    """(what AIPerf is told to replay, the corpus record of the result). A pinned corpus that is not staged, or
    a local corpus that does not load, is a UserError before anything starts."""

    if is_pinned_spec(client.traces):
        pinned = parse_spec(client.traces)
        cache = Path(client.corpus_cache) if client.corpus_cache else default_cache()
        staged = check_staged(cache, pinned)
        if not staged.ok:
            raise UserError(f"client.traces: {staged.message}")
        return client.traces, {"spec": client.traces, "pinned": pinned.provenance(), "staged_cache": str(cache),
                               "verified": staged.verified, "source": staged.source}
    corpus_dir, note = aiperf_corpus_dir(client.traces, cache_dir)
    return str(corpus_dir), {"spec": client.traces, "replayed": str(corpus_dir), "conversion": note}

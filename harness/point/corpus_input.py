"""The trace corpus as AIPerf reads it.

AIPerf 0.13's `weka_trace` loader reads a directory of per-trace `*.json` files, so such a directory
is passed through unchanged, after every file in it is validated (regular file, size, trace schema) as the
other forms are: a bad corpus is refused, naming the file, before any server starts. A JSONL file, a single trace file or an `hf:OWNER/NAME@REVISION` dataset
is validated and written out once as such a directory under the cache (keyed by the content of the
traces, so a changed corpus gets a new directory), and the result records that conversion.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def aiperf_corpus_dir(spec: str, cache_dir: Path) -> tuple[Path, str | None]:
    """(directory AIPerf replays, a note on the conversion or None when the corpus went in unchanged)."""
    from harness.traces import load_corpus
    from harness.traces.files import write_dir

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

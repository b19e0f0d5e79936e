"""Agentic trace corpora in the Weka v1 format: schema, loaders, synthetic generator, stats, capping.

The runner's entry points:

    load_corpus(path) -> Corpus      a directory of *.json traces, a .jsonl file, one .json trace, or
                                     `hf:OWNER/NAME@REVISION` (a Hugging Face dataset at a pinned revision)
    corpus_stats(corpus) -> dict     counts, percentiles and the theoretical prefix-cache hit rate
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.traces.files import read_local
from harness.traces.hub import load_hub_corpus
from harness.traces.schema import Corpus, Trace
from harness.traces.stats import corpus_stats as _stats


def load_corpus(path: str | Path, *, cache_dir: str | Path | None = None) -> Corpus:
    """Load and validate a corpus; a mistake raises `UserError` naming file, trace, request and field.

    `cache_dir` is the Hugging Face hub cache for `hf:` specs (see `harness.traces.hub`).
    """
    text = str(path)
    if text.startswith("hf:"):
        return load_hub_corpus(text, cache_dir)

    return read_local(Path(path))


def corpus_stats(corpus: Corpus) -> dict[str, Any]:
    """Statistics of a corpus (see `harness.traces.stats`)."""

    return _stats(corpus)


__all__ = ["Corpus", "Trace", "corpus_stats", "load_corpus"]

"""Corpora published as Hugging Face datasets, always at a pinned revision.

A corpus spec is `hf:OWNER/NAME@REVISION` (REVISION: a commit sha pins the corpus for good; a branch
or tag is accepted and resolved like the hub does). The dataset is fetched into, or read from, the
hub cache through `huggingface_hub`:

* cache directory: the `cache_dir` argument, else `HF_HUB_CACHE`, else `HF_HOME/hub`, else the
  library's default (`~/.cache/huggingface/hub`);
* `HF_HUB_OFFLINE=1` (read when the corpus is loaded) means the cache only, never the network.

Inside the snapshot, every `*.jsonl` file (one trace per line) is read in path order; a snapshot
without JSONL files is read as a directory of per-trace `*.json` files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from harness.errors import UserError
from harness.traces.files import read_dir, read_jsonl
from harness.traces.schema import Corpus

_SPEC = re.compile(r"^hf:(?P<repo>[A-Za-z0-9][\w.-]*/[\w.-]+)@(?P<rev>[\w./-]+)$")


def parse_spec(spec: str) -> tuple[str, str]:
    """`hf:OWNER/NAME@REVISION` -> (repo id, revision)."""
    m = _SPEC.match(spec)
    if not m:
        raise UserError(f"{spec}: expected hf:OWNER/NAME@REVISION (a revision is required; a commit sha pins "
                        "the corpus)")
    return m["repo"], m["rev"]


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}


def resolve_cache_dir(cache_dir: str | Path | None = None) -> Path | None:
    if cache_dir is not None:
        return Path(cache_dir)
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    return None


def snapshot_path(spec: str, cache_dir: str | Path | None = None) -> Path:
    """The local snapshot directory of a dataset revision, downloading it unless offline."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, RevisionNotFoundError

    repo, rev = parse_spec(spec)
    cache = resolve_cache_dir(cache_dir)
    offline = _offline()
    try:
        path = snapshot_download(repo, repo_type="dataset", revision=rev, cache_dir=cache,
                                 local_files_only=offline, allow_patterns=["*.jsonl", "*.json", "*.md"])
    except (LocalEntryNotFoundError, RevisionNotFoundError) as exc:
        where = cache or "the default hub cache"
        hint = (f"fetch it first: hf download --repo-type dataset {repo} --revision {rev}"
                + (f" --cache-dir {cache}" if cache else ""))
        mode = "offline (HF_HUB_OFFLINE=1)" if offline else "hub unreachable or revision unknown"
        raise UserError(f"{spec}: revision {rev} not found in {where}, {mode}; {hint}") from exc
    except HfHubHTTPError as exc:
        raise UserError(f"{spec}: the hub refused the download: {str(exc).splitlines()[0]}") from exc
    return Path(str(path))


def load_hub_corpus(spec: str, cache_dir: str | Path | None = None) -> Corpus:
    """Load `hf:OWNER/NAME@REVISION` from the hub cache (downloading unless offline)."""
    root = snapshot_path(spec, cache_dir)
    jsonl = sorted(root.rglob("*.jsonl"))
    if not jsonl:
        if not any(root.glob("*.json")):
            raise UserError(f"{spec}: snapshot {root} has no *.jsonl or *.json trace files")
        corpus = read_dir(root)
        return Corpus(traces=corpus.traces, source=spec)
    traces = []
    seen: dict[str, Path] = {}
    for path in jsonl:
        for trace in read_jsonl(path).traces:
            if trace.id in seen:
                raise UserError(f"{path}: trace {trace.id}: id: duplicate of the trace in {seen[trace.id]}")
            seen[trace.id] = path
            traces.append(trace)
    return Corpus(traces=tuple(traces), source=spec)

"""Offline tokenizers for AIPerf.

AIPerf resolves tokenizers through the Hugging Face hub API and forces `HF_HUB_OFFLINE=1` inside its
prompt-synthesis worker pools, so a plain local directory path fails there. The working offline path is to
register the tokenizer files in a hub-cache layout (`<hf_home>/hub/models--<org>--<name>/snapshots/<rev>/`)
and pass the repo-style name with `HF_HOME=<hf_home>` and `HF_HUB_OFFLINE=1`. This module does that for the
harness's own small tokenizer (`demo/`) and for any local tokenizer directory (e.g. a staged checkpoint).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

DEMO_TOKENIZER_DIR = Path(__file__).parent / "demo"
DEMO_TOKENIZER_NAME = "harness/demo-tokenizer"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "tokenizer.model",
                   "vocab.json", "merges.txt", "chat_template.jinja", "config.json", "generation_config.json")


def register_in_hf_cache(source_dir: Path, repo_name: str, hf_home: Path) -> str:
    """Copy the tokenizer files of `source_dir` into the hub-cache layout under `hf_home`; return `repo_name`.

    The snapshot revision is derived from the file contents, so re-registering the same files is a no-op
    and changed files get a new snapshot.
    """
    files = [source_dir / f for f in TOKENIZER_FILES if (source_dir / f).is_file()]
    if not any(f.name == "tokenizer.json" or f.name == "tokenizer.model" for f in files):
        raise FileNotFoundError(f"{source_dir}: no tokenizer.json or tokenizer.model")
    digest = hashlib.sha1()
    for f in files:
        digest.update(f.name.encode())
        digest.update(f.read_bytes())
    revision = digest.hexdigest()
    org, name = repo_name.split("/", 1)
    repo_dir = Path(hf_home) / "hub" / f"models--{org}--{name}"
    snapshot = repo_dir / "snapshots" / revision
    if not snapshot.is_dir():
        # points running at once (array tasks sharing a cache) each copy into their own directory; the first
        # rename wins and the others find the same files in place
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{revision}.", dir=snapshot.parent))
        try:
            for f in files:
                shutil.copy2(f, tmp / f.name)
            try:
                tmp.rename(snapshot)
            except OSError:
                if not snapshot.is_dir():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    (repo_dir / "refs").mkdir(parents=True, exist_ok=True)
    ref = Path(tempfile.mkstemp(prefix=".main.", dir=repo_dir / "refs")[1])
    ref.write_text(revision)
    ref.replace(repo_dir / "refs" / "main")
    return repo_name

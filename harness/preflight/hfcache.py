"""Offline lookups in a Hugging Face hub cache (`HF_HUB_CACHE`), the way an offline server finds a checkpoint.

Layout: `<hub>/models--<org>--<name>/refs/<ref>` holds a full commit hash, and `snapshots/<hash>/` the files
of that commit (`datasets--...` for datasets). With `HF_HUB_OFFLINE=1`, SGLang and `huggingface_hub` find a
revision only as a ref name or a full 40-hex commit hash whose snapshot is present; a short hash such as
`46c90f41` resolves only online. `resolve` accepts a unique short-hash prefix of a present snapshot and returns
the full hash, so the job can be given the spelling that works offline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FULL_HASH = re.compile(r"[0-9a-f]{40}")
SHORT_HASH = re.compile(r"[0-9a-f]{7,39}")


@dataclass(frozen=True)
class Snapshot:
    repo_id: str
    revision: str          # as asked for (None → "main")
    commit: str            # full 40-hex hash
    path: Path             # the snapshot directory

    @property
    def rewritten(self) -> bool:
        """True when the revision as written would not resolve offline (a short hash)."""
        return self.revision != self.commit and SHORT_HASH.fullmatch(self.revision) is not None


class NotCached(LookupError):
    """The repo or revision is not in the cache; the message says what is missing."""


def repo_dir(hub: Path, repo_id: str, repo_type: str = "model") -> Path:
    return Path(hub) / f"{repo_type}s--{repo_id.replace('/', '--')}"


def resolve(hub: Path, repo_id: str, revision: str | None, repo_type: str = "model") -> Snapshot:
    """The snapshot `revision` (ref, full hash or unique short hash; default `main`) names in the cache."""
    rev = revision or "main"
    root = repo_dir(hub, repo_id, repo_type)
    if not root.is_dir():
        raise NotCached(f"{repo_id} is not in the HF cache {hub} (no {root.name}/)")
    snapshots = root / "snapshots"
    present = sorted(p.name for p in snapshots.iterdir() if p.is_dir()) if snapshots.is_dir() else []
    ref = root / "refs" / rev
    if FULL_HASH.fullmatch(rev):
        commit = rev
    elif ref.is_file():
        commit = ref.read_text().strip()
    elif SHORT_HASH.fullmatch(rev):
        matches = [h for h in present if h.startswith(rev)]
        if len(matches) != 1:
            found = "none" if not matches else f"several ({', '.join(matches)})"
            raise NotCached(f"{repo_id}@{rev}: a short commit hash; {found} of the cached snapshots "
                            f"({root / 'snapshots'}) start with it")
        commit = matches[0]
    else:
        raise NotCached(f"{repo_id}@{rev}: no ref {ref} and not a commit hash")
    if commit not in present:
        raise NotCached(f"{repo_id}@{rev}: commit {commit} has no snapshot in {snapshots}")
    return Snapshot(repo_id, rev, commit, snapshots / commit)

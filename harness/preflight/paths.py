"""Where the job's files are: container paths seen through the cluster's mounts, checkpoints, the tokenizer.

A server in a container sees `CONTAINER` paths; the login node (where preflight runs) and the point runner
(outside the container) see the `HOST` side of each `HOST:CONTAINER[:FLAGS]` mount. A server on the host
(`runtime: none`) sees host paths as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harness.preflight.hfcache import NotCached, Snapshot, resolve

TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model")


def host_path(path: str, mounts: list[str], in_container: bool) -> Path | None:
    """The host path of `path` as the server sees it, or None when no mount makes it visible."""
    if not in_container:
        return Path(path)
    target = PurePosixPath(path)
    best: tuple[int, Path] | None = None
    for mount in mounts:
        host, container = mount.split(":")[:2]
        root = PurePosixPath(container)
        if target == root or root in target.parents:
            depth = len(root.parts)
            if best is None or depth > best[0]:
                best = (depth, Path(host) / target.relative_to(root))
    return None if best is None else best[1]


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint as the server will load it: a directory it sees, or an HF id found in the staged cache."""

    spec: str                  # --model-path / --speculative-draft-model-path after staging
    host_dir: Path | None      # its directory as the host sees it
    snapshot: Snapshot | None  # set when read from the HF cache
    problem: str | None        # why it cannot be loaded, else None


def locate_checkpoint(spec: str, revision: str | None, *, mounts: list[str], in_container: bool,
                      hf_cache: str | None) -> Checkpoint:
    """Find the checkpoint `spec` (a path, or an HF id with `revision`) where the job will look for it."""
    if spec.startswith("/"):
        host = host_path(spec, mounts, in_container)
        if host is None:
            return Checkpoint(spec, None, None, f"{spec} is not under any container mount (default_mounts)")
        if not (host / "config.json").is_file():
            return Checkpoint(spec, host, None, f"{host} holds no checkpoint (no config.json)")
        return Checkpoint(spec, host, None, None)
    if not in_container and (Path(spec) / "config.json").is_file():  # a local directory, relative to here
        return Checkpoint(spec, Path(spec).resolve(), None, None)
    if hf_cache is None:
        return Checkpoint(spec, None, None, f"{spec} is an HF id: map it in model_staging to a staged copy or set "
                                            "hf_cache to the staged HF hub cache (compute nodes are offline)")
    hub = host_path(hf_cache, mounts, in_container)
    if hub is None:
        return Checkpoint(spec, None, None, f"hf_cache {hf_cache} is not under any container mount")
    try:
        snap = resolve(hub, spec, revision)
    except NotCached as exc:
        return Checkpoint(spec, None, None, str(exc))
    if not (snap.path / "config.json").is_file():
        return Checkpoint(spec, snap.path, snap, f"{snap.path} holds no checkpoint (no config.json)")
    return Checkpoint(spec, snap.path, snap, None)


def has_tokenizer(directory: Path) -> bool:
    return any((directory / name).is_file() for name in TOKENIZER_FILES)

"""Reading files of another git revision (for append-only and changed-keys checks)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.errors import UserError


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False, timeout=60)
    except FileNotFoundError:
        raise UserError("git: not installed (needed to read the base revision)") from None


def repo_root(start: Path) -> Path:
    """The top of the git work tree containing `start`."""
    done = _git(start, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise UserError(f"{start}: not inside a git repository (needed for --base)")
    return Path(done.stdout.decode().strip())


def resolve(root: Path, rev: str) -> str:
    """The commit id `rev` names; a UserError when it names none."""
    if rev.startswith("-"):
        raise UserError(f"--base {rev}: not a git revision")
    done = _git(root, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    if done.returncode != 0:
        raise UserError(f"--base {rev}: not a commit of {root}")
    return done.stdout.decode().strip()


def show(root: Path, commit: str, path: str) -> bytes | None:
    """The bytes of `path` (relative to the repository root) at `commit`; None when it does not exist there."""
    listed = _git(root, "ls-tree", "--name-only", commit, "--", path)
    if listed.returncode != 0 or not listed.stdout.strip():
        return None
    done = _git(root, "show", f"{commit}:{path}")
    if done.returncode != 0:
        raise UserError(f"git show {commit}:{path}: {done.stderr.decode().strip()}")
    return done.stdout


def list_files(root: Path, commit: str, directory: str) -> list[str]:
    """Paths of the files directly inside `directory` at `commit` (not recursive), sorted."""
    done = _git(root, "ls-tree", "--name-only", f"{commit}:{directory}")
    if done.returncode != 0:
        return []
    return sorted(f"{directory}/{name}" for name in done.stdout.decode().splitlines() if name)


def differs(root: Path, commit: str, path: str) -> bool:
    """Whether `path` in the work tree differs from `commit` (added or removed counts)."""
    return _git(root, "diff", "--quiet", commit, "--", path).returncode != 0

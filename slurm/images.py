"""The image cache: one imported file per image reference, created under a lock by whichever array task
gets there first, checked for validity before reuse.

`python -m slurm.images ensure --runtime pyxis --arch ARCH IMAGE DEST` is what a batch script runs on the
compute node. The node's own architecture decides which variant of a multi-arch image is imported, so the cache
keeps one subdirectory per architecture and the import refuses to run on a node of another one (an x86_64
import must never land where aarch64 nodes look).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from slurm.arch import local_arch

LOCK_TIMEOUT_S = 3600.0


def cache_path(cache_dir: Path, image: str, runtime: str, arch: str) -> Path:
    """`lmsysorg/sglang:v0.5.23` on aarch64 -> `<cache>/aarch64/lmsysorg_sglang_v0.5.23.sqsh` (`.sif` for
    apptainer)."""
    stem = re.sub(r"[/:@#]", "_", image.removeprefix("docker://"))
    return Path(cache_dir) / arch / f"{stem}.{'sif' if runtime == 'apptainer' else 'sqsh'}"


def import_argv(runtime: str, image: str, dest: Path) -> list[str]:
    ref = image if "://" in image else f"docker://{image}"
    if runtime == "apptainer":
        return ["apptainer", "pull", str(dest), ref]
    return ["enroot", "import", "--output", str(dest), ref]


def is_valid(path: Path, runtime: str) -> bool:
    """A cached file is reused only if it is non-empty and, for squashfs, lists cleanly."""
    if not path.is_file() or path.stat().st_size == 0:
        return False
    if runtime != "apptainer" and shutil.which("unsquashfs"):
        check = subprocess.run(["unsquashfs", "-l", str(path)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, check=False)
        return check.returncode == 0
    return True


def ensure(image: str, dest: Path, runtime: str, timeout_s: float = LOCK_TIMEOUT_S) -> bool:
    """Make sure `dest` holds `image`; returns True when this call imported it."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{dest}.lock", "w") as lock:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{dest}.lock: held for more than {timeout_s:.0f} s") from None
                time.sleep(1.0)
        if is_valid(dest, runtime):
            return False
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.partial")
        tmp.unlink(missing_ok=True)
        dest.unlink(missing_ok=True)
        subprocess.run(import_argv(runtime, image, tmp), check=True)
        os.replace(tmp, dest)
        return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m slurm.images")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("ensure", help="import IMAGE into DEST unless a valid copy is there")
    p.add_argument("--runtime", default="pyxis", choices=["pyxis", "enroot", "apptainer"])
    p.add_argument("--arch", help="the architecture DEST is for (the profile's cpu_arch): refuse on another node")
    p.add_argument("image")
    p.add_argument("dest", type=Path)
    args = parser.parse_args(argv)
    t0 = time.monotonic()
    if args.arch is not None and local_arch() != args.arch:
        print(f"image cache: {args.image} -> {args.dest}: this node is {local_arch()}, the cache is for "
              f"{args.arch} (the profile's cpu_arch): nothing imported", file=sys.stderr)
        return 1
    try:
        imported = ensure(args.image, args.dest, args.runtime)
    except (subprocess.CalledProcessError, TimeoutError, FileNotFoundError) as exc:
        print(f"image cache: {args.image} -> {args.dest}: {exc}", file=sys.stderr)
        return 1
    print(f"image cache: {args.dest} {'imported' if imported else 'reused'} ({time.monotonic() - t0:.1f} s)",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Does every dependency of the harness install on aarch64 (GB300's Grace hosts) from a wheel? Resolves the
project's dependencies (pyproject.toml, the pinned client included) with pip's dry run against PyPI, then asks
PyPI's simple index which files each resolved release has. A release passes with a wheel for CPython 3.11 on
manylinux aarch64 (glibc up to --glibc) or a pure-Python wheel; one without is allowed only when it is on the
documented list of source builds (harness.preflight.arch.AARCH64_SOURCE_BUILDS, with what its build needs).

The resolution runs on this machine, so environment markers are evaluated for it (Linux, CPython); a
dependency that only aarch64 pulls in (`platform_machine == "aarch64"`) is seen by tools/aarch64-check.sh, which
installs for real in an emulated arm64 rootfs.

Usage: python tools/aarch64_wheels.py [--pyproject FILE] [--glibc 2.35] [--json]
Exit status: 0 all pass, 1 a dependency lacks an aarch64 wheel and is not on the list, 2 PyPI or pip failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

REPO = Path(__file__).resolve().parent.parent
SIMPLE = "https://pypi.org/simple"


class ResolveError(RuntimeError):
    pass


@dataclass(frozen=True)
class Release:
    name: str
    version: str
    wheel: str | None          # the aarch64 (or pure-Python) wheel found, None when there is none
    sdist: bool


def aarch64_tags(python: tuple[int, int] = (3, 11), glibc: tuple[int, int] = (2, 35)) -> set[Tag]:
    """The wheel tags pip accepts for CPython `python` on a glibc `glibc` aarch64 Linux host."""
    platforms = [f"manylinux_{glibc[0]}_{minor}_aarch64" for minor in range(glibc[1], 16, -1)]
    platforms.append("manylinux2014_aarch64")
    abi = f"cp{python[0]}{python[1]}"
    return set(cpython_tags(python, abis=[abi, "abi3", "none"], platforms=platforms)) | set(
        compatible_tags(python, interpreter=abi, platforms=platforms))


def dependencies(pyproject: Path) -> list[str]:
    return list(tomllib.loads(pyproject.read_text())["project"]["dependencies"])


def resolve(requirements: list[str], python: str = sys.executable) -> list[tuple[str, str]]:
    """(name, version) of every release pip would install for `requirements`, resolved against PyPI alone (pip's
    configuration files and PIP_* variables are ignored, as on a fresh node)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [python, "-m", "pip", "--isolated", "install", "--dry-run", "--ignore-installed", "--quiet",
               "--disable-pip-version-check", "--report", str(report), *requirements]
        if os.environ.get("PIP_CERT"):
            cmd[4:4] = ["--cert", os.environ["PIP_CERT"]]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise ResolveError(f"pip could not resolve the dependencies: {proc.stderr.strip()[-2000:]}")
        items = json.loads(report.read_text())["install"]
    return sorted((item["metadata"]["name"], item["metadata"]["version"]) for item in items)


def _index_files(url: str, timeout_s: float, fresh: bool) -> list[dict[str, Any]]:
    headers = {"Accept": "application/vnd.pypi.simple.v1+json"}
    if fresh:
        headers["Cache-Control"] = "no-cache"   # past a cache that answered with an older page
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout_s) as resp:
            files: list[dict[str, Any]] = json.load(resp)["files"]
    except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
        raise ResolveError(f"{url}: {exc}") from exc
    return files


def _lists_version(files: list[dict[str, Any]], want: Version) -> bool:
    for f in files:
        try:
            name = f["filename"]
            got = (parse_wheel_filename(name)[1] if name.endswith(".whl")
                   else parse_sdist_filename(name)[1] if name.endswith((".tar.gz", ".zip")) else None)
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
            continue
        if got == want:
            return True
    return False


def release(name: str, version: str, tags: set[Tag], timeout_s: float = 30.0) -> Release:
    """What PyPI holds for `name==version` (its JSON simple index, PEP 691): an aarch64-compatible wheel and
    whether there is an sdist. An index page that lists no file of the release pip resolved is an older page
    (a cache's): asked once more past caches, and an error if it still lists none, never a missing wheel."""
    url = f"{SIMPLE}/{canonicalize_name(name)}/"
    want = Version(version)
    files = _index_files(url, timeout_s, fresh=False)
    if not _lists_version(files, want):
        files = _index_files(url, timeout_s, fresh=True)
        if not _lists_version(files, want):
            raise ResolveError(f"{url}: the index lists no file of {name}=={version}, which pip resolved")
    wheel, sdist = None, False
    for f in files:
        filename = f["filename"]
        try:
            if filename.endswith(".whl"):
                _, got, _, wheel_tags = parse_wheel_filename(filename)
                if got == want and not f.get("yanked") and wheel is None and wheel_tags & tags:
                    wheel = filename
            elif filename.endswith((".tar.gz", ".zip")):
                sdist = sdist or parse_sdist_filename(filename)[1] == want
        except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
            continue   # old releases with names the current rules reject
    return Release(name, version, wheel, sdist)


def check(releases: list[Release], source_builds: dict[str, str | None]) -> tuple[list[Release], list[Release]]:
    """(allowed source builds, failures): the releases without an aarch64 wheel, split by the documented list."""
    allowed = {canonicalize_name(n) for n in source_builds}
    missing = [r for r in releases if r.wheel is None]
    return ([r for r in missing if canonicalize_name(r.name) in allowed],
            [r for r in missing if canonicalize_name(r.name) not in allowed])


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(REPO))
    from harness.preflight.arch import AARCH64_SOURCE_BUILDS

    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--pyproject", type=Path, default=REPO / "pyproject.toml")
    ap.add_argument("--glibc", default="2.35", help="the nodes' glibc, newest manylinux accepted (default 2.35)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    glibc = tuple(int(x) for x in args.glibc.split("."))
    tags = aarch64_tags((3, 11), (glibc[0], glibc[1]))
    try:
        resolved = resolve(dependencies(args.pyproject))
        with ThreadPoolExecutor(max_workers=16) as pool:
            releases = list(pool.map(lambda nv: release(nv[0], nv[1], tags), resolved))
    except ResolveError as exc:
        print(f"aarch64_wheels: {exc}", file=sys.stderr)
        return 2
    builds, failures = check(releases, AARCH64_SOURCE_BUILDS)
    if args.json:
        print(json.dumps({"releases": len(releases), "source_builds": [f"{r.name}=={r.version}" for r in builds],
                          "missing": [f"{r.name}=={r.version}" for r in failures]}, indent=2))
    else:
        print(f"{len(releases)} releases resolved; {len(releases) - len(builds) - len(failures)} have an aarch64 "
              "wheel")
        for r in builds:
            needs = {canonicalize_name(k): v for k, v in AARCH64_SOURCE_BUILDS.items()}[canonicalize_name(r.name)]
            print(f"  source build (listed): {r.name}=={r.version}, needs "
                  + (needs or "nothing beyond pip (pure Python, sdist only)"))
        for r in failures:
            print(f"  MISSING: {r.name}=={r.version} has no aarch64 wheel ("
                  + ("sdist only" if r.sdist else "no sdist either") + "): add an aarch64 wheel, pin a release "
                  "that has one, or list it in harness.preflight.arch.AARCH64_SOURCE_BUILDS with its build needs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

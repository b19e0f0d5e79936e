"""The CPU architecture checks of preflight: the partition's compute nodes and the driver interpreter against
the profile's `cpu_arch`. A mismatch is a FAIL naming both architectures; what cannot be asked (no Slurm
here, no node of the partition reporting one) is a WARN."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from harness.preflight.checks import Finding
from slurm.arch import local_arch, partition_arches, venv_arch
from slurm.query import SlurmError

NodeArches = tuple[str, dict[str, str]]   # (partition, node -> architecture)

# Dependencies with no aarch64 wheel on PyPI, which installing the harness on an aarch64 host builds from source,
# and what that build needs (None: pure Python published as an sdist only, built by pip alone). tools/
# aarch64_wheels.py (run by the tests) fails on any other dependency without an aarch64 wheel.
AARCH64_SOURCE_BUILDS: dict[str, str | None] = {
    "crick": "a C compiler and the Python headers (Debian/Ubuntu: gcc python3-dev; RHEL: gcc python3-devel)",
    "rouge-score": None,    # lm-eval's
    "sqlitedict": None,     # lm-eval's
    "word2number": None,    # lm-eval's
}


def ask_slurm(partition: str | None) -> NodeArches | str:
    """The partition's nodes and their architecture (`scontrol show node`), or why Slurm could not say."""

    try:
        return partition_arches(partition)
    except SlurmError as exc:
        return str(exc)


def nodes(cpu_arch: str, found: NodeArches | str, cluster_src: str) -> list[Finding]:
    """Every node of the partition is of `cpu_arch` (FAIL when none is; WARN for a partition of mixed hosts)."""
    where = f"{cluster_src}:cpu_arch"
    if isinstance(found, str):
        return [Finding("warn", "cpu_arch", where, f"{cpu_arch}, not checked: cannot ask Slurm ({found})")]
    partition, arches = found
    if not arches:
        return [Finding("warn", "cpu_arch", where, f"{cpu_arch}, not checked: no node of partition {partition!r} "
                                                   "reports its architecture")]
    other = {n: a for n, a in arches.items() if a != cpu_arch}
    if not other:
        return [Finding("pass", "cpu_arch", where, f"{cpu_arch}: the {len(arches)} node(s) of partition "
                                                   f"{partition!r} are {cpu_arch}")]
    kinds = ", ".join(sorted(set(other.values())))
    names = ", ".join(sorted(other)[:10]) + (f", {len(other) - 10} unnamed" if len(other) > 10 else "")
    if len(other) == len(arches):
        return [Finding("fail", "cpu_arch", where, f"{cpu_arch}, but the nodes of partition {partition!r} are "
                                                   f"{kinds} ({names}): set cpu_arch to {kinds} or use a partition "
                                                   f"of {cpu_arch} nodes")]
    return [Finding("warn", "cpu_arch", where, f"{cpu_arch}, but {len(other)} of the {len(arches)} nodes of "
                                               f"partition {partition!r} are {kinds} ({names}): keep the job off "
                                               "them (sbatch_directives: --constraint=...)")]


def driver(profile: Any, python: str | None, cluster_src: str) -> list[Finding]:
    """The interpreter the batch script runs the point runner with (`--python`, else `driver.python`, else this
    one) exists and is built for the compute nodes' architecture."""

    arch = profile.cpu_arch
    where = "--python" if python else f"{cluster_src}:driver.python"
    python = python or profile.driver.python
    if python is None:
        here = local_arch()
        if here != arch:
            return [Finding("fail", "driver", where, f"not set: the compute nodes would run {sys.executable}, this "
                                                     f"{here} machine's interpreter, but cpu_arch is {arch}: set "
                                                     f"driver.python (or --python) to a venv built on an {arch} host")]
        return [Finding("warn", "driver", where, "not set: the compute nodes run the interpreter that runs "
                                                 "`harness submit`")]
    if not Path(python).is_file():
        return [Finding("fail", "driver", where, f"{python}: no such interpreter")]
    built = venv_arch(python)
    if built is not None and built != arch:
        return [Finding("fail", "driver", where, f"{python}: its venv is built for {built}, but cpu_arch is {arch}: "
                                                 f"build it on an {arch} host")]
    return [Finding("pass", "driver", where, python + (f" ({built})" if built else ""))]


def driver_build(profile: Any, python: str | None, cluster_src: str) -> list[Finding]:
    """Where cpu_arch is aarch64 and the driver venv is still to be built (no interpreter at `--python` /
    `driver.python`, or none set): a WARN naming the dependencies that compile there and what the build host
    needs, before the venv build fails on a node without a compiler."""
    if profile.cpu_arch != "aarch64":
        return []
    python = python or profile.driver.python
    if python is not None and Path(python).is_file():
        return []
    compiled = {name: needs for name, needs in AARCH64_SOURCE_BUILDS.items() if needs}
    names = ", ".join(sorted(compiled))
    needs = "; ".join(f"{name}: {need}" for name, need in sorted(compiled.items()))
    return [Finding("warn", "driver_build", f"{cluster_src}:cpu_arch",
                    f"the driver venv is still to be built on an aarch64 host, and {names} (no aarch64 wheel on "
                    f"PyPI) compile(s) there: that host needs {needs}; or build the wheels once and install "
                    "with `pip install --find-links WHEELHOUSE` (docs/slurm.md, \"GB300: the driver on aarch64\")")]

"""The container checks of preflight: the pyxis/enroot mistakes that otherwise show first on a GPU node.

Without a job (`static`):
- `mount_root`: every default mount's source lies under one of the profile's `container.mount_roots` (a site that
  lets containers bind only its shared filesystems); unset roots: not checked.
- `image_path`: pyxis takes a squash file only as an absolute path or one starting with `./` (anything else is
  read as a registry reference).

With a probe (`probe`, `harness preflight --probe`): two one-task steps on the partition, a minute each at most,
- the node itself (`srun sh -c ...`): the identity of its root filesystem, its `/etc/os-release`, and whether the
  squash file and every mount source are readable there (`image_readable`, `mount_source`);
- the same through pyxis (`srun --container-image=... --container-mounts=...`): the root and `/etc/os-release` the
  step sees. The same root as the node's means `--container-image` was ignored (pyxis not loaded on the compute
  nodes: `container_image` FAIL); otherwise the line shows the container's `PRETTY_NAME`.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.preflight.checks import Finding

PROBE_TIME = "00:02:00"
PROBE_TIMEOUT_S = 600.0
Runner = Callable[[list[str]], "subprocess.CompletedProcess[str]"]
# What Slurm adds after any failed step, explaining nothing: the plugin's own error comes before these
SLURM_TRAILERS = re.compile(r"spank: required plugin \S+: \w+\(\) failed with rc=|Failed to invoke spank plugin stack"
                            r"|srun: error: \S+: tasks? [\d,\-]+: Exited with exit code")


def step_said(step: subprocess.CompletedProcess[str]) -> str:
    """Why a probe step failed: the last three lines of its stderr that are not Slurm's own trailers (all of them
    where nothing else is), else its exit code."""
    lines = step.stderr.strip().splitlines()
    telling = [ln for ln in lines if not SLURM_TRAILERS.search(ln)] or lines
    return " | ".join(telling[-3:]) or f"srun exited {step.returncode}"


def _sources(mounts: list[str]) -> list[str]:
    return [m.split(":", 1)[0] for m in mounts]


def static(profile: Any, image_file: str | None, cluster_src: str) -> list[Finding]:
    """The checks that need no job: mount sources under the allowed roots, the squash file's path form."""
    found: list[Finding] = []
    roots = [Path(r) for r in getattr(profile.container, "mount_roots", None) or []]
    where = f"{cluster_src}:default_mounts"
    for source in _sources(list(profile.default_mounts)):
        if roots and not any(Path(source) == r or r in Path(source).parents for r in roots):
            found.append(Finding("fail", "mount_root", where, f"{source} lies outside container.mount_roots "
                                 f"({', '.join(map(str, roots))}): the runtime refuses to bind it on the nodes"))
    if roots and not any(f.code == "mount_root" for f in found) and profile.default_mounts:
        found.append(Finding("pass", "mount_root", where, "every mount source lies under container.mount_roots"))
    if profile.container.runtime == "pyxis" and image_file is not None \
            and not (image_file.startswith("/") or image_file.startswith("./")):
        found.append(Finding("fail", "image_path", f"{cluster_src}:container.image_cache_dir",
                             f"{image_file}: pyxis reads a squash file only from an absolute path or one starting "
                             "with ./ (anything else is taken for a registry reference)"))
    return found


def _srun(profile: Any, *extra: str) -> list[str]:
    argv = ["srun", "--nodes=1", "--ntasks=1", f"--time={PROBE_TIME}", "--job-name=harness-preflight-probe"]
    for key in ("partition", "account", "qos"):
        value = getattr(profile, key, None)
        if value and "SITE" not in str(value):
            argv.append(f"--{key}={value}")
    return [*argv, *extra]


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(argv, 127, "", f"{type(exc).__name__}: {exc}")


SEEN = 'stat -c "ROOT %d:%i" /; grep -h "^PRETTY_NAME=" /etc/os-release 2>/dev/null || echo "PRETTY_NAME=unknown"'


def _parse(stdout: str) -> tuple[str | None, str, dict[str, bool]]:
    """(root identity, PRETTY_NAME, {path: readable}) from a probe step's output."""
    root, pretty, readable = None, "unknown", {}
    for line in stdout.splitlines():
        if line.startswith("ROOT "):
            root = line[5:].strip()
        elif line.startswith("PRETTY_NAME="):
            pretty = line.split("=", 1)[1].strip().strip('"')
        elif line.startswith(("READABLE ", "UNREADABLE ")):
            word, path = line.split(" ", 1)
            readable[path] = word == "READABLE"
    return root, pretty, readable


def probe(profile: Any, image: str, image_file: str | None, cluster_src: str, run: Runner = _run) -> list[Finding]:
    """Two probe steps (the node, then the same through pyxis) and what they show."""
    where = f"{cluster_src}:container"
    files = [*([image_file] if image_file else []), *_sources(list(profile.default_mounts))]
    checks = "; ".join(f'if [ -r {shlex.quote(f)} ]; then echo "READABLE {f}"; else echo "UNREADABLE {f}"; fi'
                       for f in files)
    node = run(_srun(profile, "sh", "-c", f"{SEEN}; {checks}" if checks else SEEN))
    if node.returncode != 0:
        return [Finding("fail", "container_probe", where, "the probe step on the node failed: " + step_said(node))]
    node_root, node_os, readable = _parse(node.stdout)
    found: list[Finding] = []
    if image_file:
        found.append(Finding("pass" if readable.get(image_file) else "fail", "image_readable",
                             f"{where}.image_cache_dir", f"{image_file} is "
                             + ("readable on the node" if readable.get(image_file) else "not readable on the node "
                                "(not there, or not shared with the compute nodes, or its permissions)")))
    for source in _sources(list(profile.default_mounts)):
        if not readable.get(source):
            found.append(Finding("fail", "mount_source", f"{cluster_src}:default_mounts",
                                 f"{source} does not exist (or cannot be read) on the node: the step would fail"))
    mounts = [f"--container-mounts={','.join(profile.default_mounts)}"] if profile.default_mounts else []
    boxed = run(_srun(profile, f"--container-image={image_file or image}", *mounts, "--no-container-mount-home",
                      "sh", "-c", SEEN))
    if boxed.returncode != 0:
        said = step_said(boxed)
        hint = " (srun does not know --container-image: pyxis is not loaded here)" \
            if "unrecognized option" in said or "unknown option" in said else ""
        return [*found, Finding("fail", "container_image", where, f"the probe step in {image_file or image} failed: "
                                f"{said}{hint}")]
    boxed_root, boxed_os, _ = _parse(boxed.stdout)
    if boxed_root is not None and boxed_root == node_root:
        found.append(Finding("fail", "container_image", where,
                             f"--container-image was ignored: the step saw the node's own root filesystem "
                             f"(/etc/os-release: {boxed_os}); load pyxis on the compute nodes (plugstack.conf)"))
    else:
        found.append(Finding("pass", "container_image", where,
                             f"the step ran in {image_file or image}: {boxed_os} (the node: {node_os})"))
    return found

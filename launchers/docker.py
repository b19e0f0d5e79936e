"""The docker launcher: `docker run` of the plan's image on the host network, and what docker itself says.

One container per launch, named after the point's directory and the launch (`harness-<config_key>-c<conc>-<hash of
the directory>-<launch>`); every container is `--rm` and carries the label `io.harness.point=<directory>`, so the
next run of the same point finds any container a killed run left behind by that label and removes it (`docker rm
-f`) before it starts its own, and a killed run's watchdog, which removes its own container by name, never touches
the next run's. The point's directory is mounted at its own path; every mount is `--mount type=bind`, which fails on a source that does not exist
(`-v` would create it). A simulator point gets neither `--gpus` (a host without the NVIDIA runtime refuses the flag) nor SGLang's
raised limits (`--ulimit memlock=-1`, `nofile=65536`: a daemon without CAP_SYS_RESOURCE cannot grant them, and the
simulator needs neither); both keep `--ipc host` and `--shm-size`.

When the container never starts, `docker run` exits 125 and prints the daemon's own words; `start_failure` turns
them into a reason code (`image_unavailable`, `mount_missing`, `gpu_runtime_missing`, `container_start_failed`)
followed by those words.

When the daemon goes away while the container runs (stopped, killed, restarted), `docker run` ends too: with the
container's own status when the daemon stopped it first (often 0, or 137), or with 125 and the client's words
(`error waiting for container: unexpected EOF`). `runtime_gone` finds those words in the server log and
`daemon_gone` asks the daemon itself (`docker info`), so that the point names the daemon, not the server.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from pathlib import Path

from launchers.context import LaunchContext

SIM_LABEL = "io.harness.simulator"
POINT_LABEL = "io.harness.point"
DOCKER_ERROR_EXIT = 125   # docker run's status when the container itself could not be created or started
_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_.-]+")


def container_name(config_key: str, conc: int, point_dir: Path, launch: str) -> str:
    """The container of one launch (`launch`: a short id unique to it) of one point directory; the same point of
    another output directory gets another name (two runs side by side never touch each other's container)."""
    digest = hashlib.sha256(str(Path(point_dir).resolve()).encode()).hexdigest()[:10]
    return f"harness-{_NAME_CHARS.sub('-', config_key).strip('-.') or 'point'}-c{conc}-{digest}-{launch}"


def _mount_flag(spec: str) -> list[str]:
    """`SRC:DST[:ro|rw]` as `--mount type=bind,...` (a missing SRC is then docker's error, not a new directory)."""
    parts = spec.split(":")
    src, dst = parts[0], parts[1] if len(parts) > 1 else parts[0]
    ro = len(parts) > 2 and parts[2] == "ro"
    fields = ["type=bind", _csv_field(f"source={src}"), _csv_field(f"target={dst}"), *(["readonly"] if ro else [])]
    return ["--mount", ",".join(fields)]


def _csv_field(field: str) -> str:
    """docker reads `--mount` as one CSV record: a field holding a comma or a quote is quoted."""
    return f'"{field.replace(chr(34), chr(34) * 2)}"' if "," in field or '"' in field else field


def render(server_argv: list[str], env_flags: list[str], ctx: LaunchContext) -> list[str]:
    argv = ["docker", "run", "--rm", "--name", ctx.container_name, "--label", f"{POINT_LABEL}={ctx.point_dir}"]
    if ctx.engine != "sim":
        argv += ["--gpus", "all" if ctx.gpus is None else f'"device={",".join(ctx.gpus)}"']
    argv += ["--network", "host", "--ipc", "host", "--shm-size", "32g"]
    if ctx.engine != "sim":   # pinned memory and many sockets for SGLang; raising them needs CAP_SYS_RESOURCE
        argv += ["--ulimit", "memlock=-1", "--ulimit", "nofile=65536:65536"]
    # the point's directory at its own path: what the server writes (crash dumps, traces) lands beside its log
    for mount in (f"{ctx.point_dir}:{ctx.point_dir}", *ctx.mounts):
        argv += _mount_flag(mount)
    return [*argv, *env_flags, ctx.image, *server_argv]


def remove_point_containers(point_dir: Path) -> None:
    """`docker rm -f` of every container labelled with `point_dir` (running or not): what earlier runs left."""
    try:
        out = subprocess.run(["docker", "ps", "-aq", "--filter", f"label={POINT_LABEL}={point_dir}"],
                             capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return
    for container_id in out.stdout.split():
        remove(container_id)


def remove(name: str) -> None:
    """`docker rm -f NAME`: a container of that name (running or not) is gone afterwards; no such container is fine."""
    try:
        subprocess.run(["docker", "rm", "-f", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        pass


def image_label(image: str, label: str) -> tuple[bool, str | None]:
    """(whether docker knows the image locally, the value of `label` on it or None)."""
    try:
        out = subprocess.run(["docker", "image", "inspect", "--format", "{{json .Config.Labels}}", image],
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False, None
    if out.returncode != 0:
        return False, None
    import json

    try:
        labels = json.loads(out.stdout) or {}
    except ValueError:
        labels = {}
    value = labels.get(label) if isinstance(labels, dict) else None
    return True, None if value is None else str(value)


_FAILURES = (
    ("image_unavailable", ("unable to find image", "no such image", "pull access denied", "manifest unknown",
                           "repository does not exist", "registry-1.docker.io", "failed to resolve reference")),
    ("mount_missing", ("bind source path does not exist", "invalid mount config", "mount source")),
    ("gpu_runtime_missing", ("could not select device driver", "nvidia-container-cli", "unknown runtime")),
)


def start_failure(log_text: str) -> tuple[str, str] | None:
    """(reason code, docker's own words) when `log_text` (the server log) holds docker's refusal to start the
    container, else None."""
    said = [ln.strip() for ln in log_text.splitlines()
            if ln.startswith(("docker: ", "Unable to find image", "Error response from daemon", "Error: ",
                              "invalid argument"))]
    if not said:
        return None
    text = "; ".join(dict.fromkeys(said))[-800:]
    low = text.lower()
    for code, markers in _FAILURES:
        if any(m in low for m in markers):
            return code, text
    return "container_start_failed", text


# What the docker client (docker/cli, and the moby client it is built on) says when its daemon does not answer or
# drops the connection while `docker run` waits on its container.
_RUNTIME_GONE = re.compile(r"Cannot connect to the Docker daemon at|failed to connect to the docker API at|"
                           r"error during connect:|error waiting for container: ")
_LOGRUS_MSG = re.compile(r'\bmsg="((?:[^"\\]|\\.)*)"')
DAEMON_PROBE_S = 15.0


def _said(line: str) -> str:
    """A client line in docker's own words: the message of a logrus line (`time=... level=error msg="..."`),
    without the `docker: ` prefix of `docker run`'s errors."""
    found = _LOGRUS_MSG.search(line)
    words = found.group(1).replace('\\"', '"') if found else line
    return words.strip().removeprefix("docker: ")


def runtime_gone(log_text: str) -> str | None:
    """docker's own words when `log_text` (the server log, or `docker info`'s output) says that its daemon does not
    answer or went away under the container (`Cannot connect to the Docker daemon at unix:///var/run/docker.sock.
    Is the docker daemon running?`, `error waiting for container: unexpected EOF`); None otherwise."""
    said = [_said(line) for line in log_text.splitlines() if _RUNTIME_GONE.search(line)]
    return "; ".join(dict.fromkeys(said))[-800:] if said else None


def daemon_gone(timeout_s: float = DAEMON_PROBE_S) -> str | None:
    """docker's own words when its daemon does not answer `docker info` now (stopped, or its socket gone); a
    daemon that takes longer than `timeout_s` is gone too. None while it answers, or when docker cannot be run."""
    try:
        out = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True, text=True,
                             timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return f"`docker info` did not answer within {timeout_s:g} s"
    except OSError:
        return None
    return None if out.returncode == 0 else runtime_gone(f"{out.stdout}\n{out.stderr}")

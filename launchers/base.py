"""Launchers: render and start the server command of a plan on a node.

`render(server, ctx)` is pure and returns the exact argv the launcher runs; `start` runs it as a
`ProcessGroup` (own process group, output to `server.log`). Container launchers pass the plan's
environment into the container; the host environment of the launcher process itself is inherited.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from harness.errors import UserError
from harness.redact_plain import is_plain_env
from launchers import docker
from launchers.context import LaunchContext
from launchers.process_group import ProcessGroup
from launchers.srun_step import stop_step


@dataclass
class RunningServer:
    """A started server: its process group, the command that stops its container, if any, and the name of its
    srun step (pyxis), which is stopped through Slurm so that the server gets SIGTERM."""

    process: ProcessGroup
    argv: list[str]
    teardown_argv: list[str] | None = None
    step_name: str | None = None
    stopped_how: str = "SIGTERM to its process group"

    def exit_code(self) -> int | None:
        return self.process.exit_code()

    def stop(self, grace_s: float = 10.0) -> int | None:
        if self.step_name is not None:
            code, self.stopped_how = stop_step(self.process, self.step_name, grace_s)
            return code
        if self.teardown_argv:
            subprocess.run(self.teardown_argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=60, check=False)
        return self.process.stop(grace_s)


@dataclass(frozen=True)
class Launcher:
    kind: str
    description: str

    def render(self, server_argv: list[str], env: dict[str, str], ctx: LaunchContext) -> list[str]:
        return RENDERERS[self.kind](server_argv, env, ctx)

    def teardown(self, ctx: LaunchContext) -> list[str] | None:
        return ["docker", "rm", "-f", ctx.container_name] if self.kind == "docker" else None

    def start_failure(self, server_log: Path) -> tuple[str, str] | None:
        """(reason code, the runtime's own words) when the runtime refused to start the server's container."""
        if self.kind != "docker":
            return None
        try:
            return docker.start_failure(server_log.read_text(errors="replace"))
        except OSError:
            return None

    def runtime_gone(self, server_log: Path) -> str | None:
        """The container runtime's own words when it went away under the server (docker: its client's words in the
        server log that the daemon does not answer, else a daemon that does not answer `docker info` now); None for
        a launcher without a daemon, or while the daemon answers."""
        if self.kind != "docker":
            return None
        return docker.runtime_gone(_log_tail(server_log)) or docker.daemon_gone()

    def process_env(self, env: dict[str, str], ctx: LaunchContext) -> dict[str, str]:
        """The environment the rendered argv runs with: this process's, the plan's, the GPUs for local/pyxis."""
        proc_env = {**os.environ, **env}
        if self.kind == "apptainer":  # values off the allow-list reach an apptainer container by APPTAINERENV_
            proc_env.update({f"APPTAINERENV_{k}": v for k, v in env.items() if not is_plain_env(k)})
        if ctx.gpus is not None and self.kind in ("local", "pyxis"):
            proc_env["CUDA_VISIBLE_DEVICES"] = ",".join(ctx.gpus)
        proc_env["PYTHONUNBUFFERED"] = "1"
        return proc_env

    def clear_leftovers(self, point_dir: Path) -> None:
        """Before a point's first launch: remove every container an earlier (killed) run of the point left behind
        (docker: those labelled with the point's directory)."""
        if self.kind == "docker":
            docker.remove_point_containers(point_dir)

    def start(self, server_argv: list[str], env: dict[str, str], ctx: LaunchContext) -> RunningServer:
        """Start the server; its container is removed too when this process dies without stopping it (the group's
        watchdog, by the container's own name)."""
        argv = self.render(server_argv, env, ctx)
        teardown = self.teardown(ctx)
        process = ProcessGroup(argv, self.process_env(env, ctx), ctx.point_dir / ctx.log_name, on_orphan=teardown)
        return RunningServer(process=process, argv=argv, teardown_argv=teardown,
                             step_name=ctx.container_name if self.kind == "pyxis" else None)


def _log_tail(path: Path, size: int = 64 * 1024) -> str:
    """The end of a log (where a container runtime's last words are); empty when it cannot be read."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, fh.seek(0, 2) - size))
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


def _local(server_argv: list[str], env: dict[str, str], ctx: LaunchContext) -> list[str]:
    # The simulator (and the router in front of it) ships with the harness: run it with the harness's own
    # interpreter.
    if ctx.engine == "sim" and server_argv[:1] == ["python3"]:
        return [sys.executable, *server_argv[1:]]
    return list(server_argv)


def _env_flags(flag: str, env: dict[str, str], unlisted: str = "by_name") -> list[str]:
    """`flag KEY=VALUE` per variable on the allow-list of plain values (`harness.redact_plain`). Any other value
    (a secret, or a neutral name that says nothing about its value) never goes on the command line, where `ps`
    shows it: `by_name` passes `flag KEY` (docker and enroot take the value from their own environment, which
    holds it), `omit` leaves it to the runtime's own channel (apptainer's APPTAINERENV_)."""
    out: list[str] = []
    for key in sorted(env):
        if is_plain_env(key):
            out += [flag, f"{key}={env[key]}"]
        elif unlisted == "by_name":
            out += [flag, key]
    return out


def _docker(server_argv: list[str], env: dict[str, str], ctx: LaunchContext) -> list[str]:
    return docker.render(server_argv, _env_flags("-e", env), ctx)   # -e wins over the image's own ENV


def _enroot(server_argv: list[str], env: dict[str, str], ctx: LaunchContext) -> list[str]:
    argv = ["enroot", "start", "--rw"]
    for mount in ctx.mounts:
        argv += ["--mount", mount]
    return [*argv, *_env_flags("--env", env), ctx.image_path or ctx.container_name, *server_argv]


# What the launcher process adds to the plan's environment (`Launcher.process_env`) for a pyxis step.
PYXIS_OWN_ENV = ("PYTHONUNBUFFERED",)


def pyxis_container_env(env: dict[str, str], ctx: LaunchContext) -> list[str]:
    """Every variable the harness sets for a pyxis step: the plan's, the GPUs it gives the step, its own. pyxis keeps
    an image's value of a variable over the exported host value unless `--container-env` names it."""
    own = [*PYXIS_OWN_ENV, *(["CUDA_VISIBLE_DEVICES"] if ctx.gpus is not None else [])]
    return sorted({*env, *own})


def _pyxis(server_argv: list[str], env: dict[str, str], ctx: LaunchContext) -> list[str]:
    server_argv = _local(server_argv, env, ctx)  # the simulator runs with the harness's own interpreter
    argv = ["srun", "--overlap", "--nodes=1", "--ntasks=1", *([f"--nodelist={ctx.node}"] if ctx.node else []),
            f"--job-name={ctx.container_name}", "--export=ALL", f"--container-image={ctx.image_path or ctx.image}"]
    if ctx.mounts:
        argv.append(f"--container-mounts={','.join(ctx.mounts)}")
    # env reaches the step through --export=ALL; --container-env makes the harness's values win over the image's
    named = pyxis_container_env(env, ctx)
    argv += [*([f"--container-env={','.join(named)}"] if named else []),
             "--no-container-mount-home", "--container-remap-root", "--no-container-entrypoint"]
    return [*argv, *server_argv]


def _apptainer(server_argv: list[str], env: dict[str, str], ctx: LaunchContext) -> list[str]:
    argv = ["apptainer", "exec", "--nv", "--cleanenv"]
    for mount in ctx.mounts:
        argv += ["--bind", mount]
    image = ctx.image_path or f"docker://{ctx.image}"
    return [*argv, *_env_flags("--env", env, unlisted="omit"), image, *server_argv]


RENDERERS = {"local": _local, "docker": _docker, "enroot": _enroot, "pyxis": _pyxis, "apptainer": _apptainer}

LAUNCHERS = {
    "local": Launcher("local", "a process on this host (the simulator, or SGLang installed locally)"),
    "docker": Launcher("docker", "docker run with the pinned image, host network, GPUs by device id"),
    "enroot": Launcher("enroot", "enroot start of an imported squashfs image"),
    "pyxis": Launcher("pyxis", "an srun step with pyxis container flags inside a Slurm allocation"),
    "apptainer": Launcher("apptainer", "apptainer exec --nv of a docker:// image or a .sif file"),
}


def launcher_kinds() -> list[str]:
    return list(LAUNCHERS)


def get_launcher(kind: str) -> Launcher:
    try:
        return LAUNCHERS[kind]
    except KeyError:
        raise UserError(f"--launcher: unknown kind {kind!r} (choose from {', '.join(LAUNCHERS)})") from None


# Container launchers run the plan's image: an SGLang image, which does not hold this harness. docker may run an
# image that does (`tools/sim-image.sh` builds one, labelled io.harness.simulator=1).
SIM_REFUSED = ("docker", "enroot", "apptainer")
SGLANG_IMAGE_REPOS = ("lmsysorg/sglang",)


def check_engine(kind: str, engine: str, image: str) -> None:
    """Refuse (one line) to start the simulator inside an image that lacks the harness: an SGLang image, or (docker)
    a local image without the simulator's label. An image docker does not have is left to docker, which says so."""
    if engine != "sim" or kind not in SIM_REFUSED:
        return
    if kind == "docker" and not image.startswith(SGLANG_IMAGE_REPOS):
        present, label = docker.image_label(image, docker.SIM_LABEL)
        if not present or label == "1":
            return
    raise UserError(f"--launcher {kind} with engine: sim: the simulator ships with the harness, not in the "
                    f"image {image}; run it with --launcher local, --launcher docker with an image that holds the "
                    f"harness (bash tools/sim-image.sh builds harness-sim:local), or --set engine=sglang")

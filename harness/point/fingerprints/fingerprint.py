"""Worker fingerprints (`fingerprint_agg_w0.json`) in srt-slurm's form, captured inside the server's environment.

The srt-slurm part (`hostname`, `timestamp`, `arch`, `os`, `cpu`, `gpu`, `python_version`, `cuda_version`,
`nccl_version`, `frameworks`, `model`, `env`, `pip_packages`) comes from `fingerprint_capture.py` run by the
server's own interpreter through the server's own launcher: `capture_argv` is the server's launch argv with
the server command replaced by `PY -c <capture script> MODEL_PATH` (a docker capture runs in its own
`fingerprint-<name>` container of the same image, mounts, GPUs and environment). It runs while the server
starts (`BackgroundCapture`), as srt-slurm's runs in the worker's preamble. srt-slurm's `diff_fingerprints`
reads these keys unchanged.

Beside them, in srt-slurm's order for extra keys (alphabetical): `capture` (the rendered capture argv with the
script named by its sha256, exit status, seconds, how the GPU block was obtained), `engine`, `harness` (the
harness's git commit and version), `image` (reference, the digest where the runtime gives one, the
image-baked variables), `launcher`, `schema_version` (of the harness's part), `server` (launch argv and
environment, what `/server_info` reports, and `effective_env`: the environment the running server process has,
read at readiness, against what the harness set; `harness.point.servers.server_env`). The file is written in exactly this order. Secrets are
redacted by its writer (`harness.artifacts`; inside the capture srt-slurm's own rule has already masked `env`).
A capture that fails leaves srt-slurm's keys as its sentinel `"unavailable"` and says why.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import SCHEMA_VERSION
from harness.point.fingerprints.fingerprint_capture import MARKER
from harness.provenance import harness_commit

if TYPE_CHECKING:
    from launchers import LaunchContext, Launcher

IMAGE_ENV = ("SGLANG_BUILD_COMMIT", "SGLANG_IMAGE_TAG", "SGLANG_VERSION", "CUDA_VERSION", "NVIDIA_DRIVER_VERSION")
SRT_SLURM_COMMIT = "c88ef731636890ff6385a783e152c1790e15b194"
# srt-slurm's `_FIELD_ORDER`; any other key follows alphabetically.
FIELD_ORDER = ("hostname", "timestamp", "arch", "os", "cpu", "gpu", "python_version", "cuda_version",
               "nccl_version", "frameworks", "model", "pip_packages")
CAPTURED = (*FIELD_ORDER, "env")
UNAVAILABLE = "unavailable"
CAPTURE_SCRIPT = Path(__file__).with_name("fingerprint_capture.py")
CAPTURE_TIMEOUT_S = 300.0   # a container start (docker, pyxis) plus several `pip freeze` runs


def _script() -> tuple[str, str]:
    text = CAPTURE_SCRIPT.read_text()
    return text, hashlib.sha256(text.encode()).hexdigest()


def _interpreter(server_argv: list[str]) -> str:
    """The server's interpreter: its argv[0] when that is a Python, else `python3` as srt-slurm runs."""
    first = server_argv[0] if server_argv else ""
    return first if Path(first).name.startswith("python") else "python3"


def _model_path(server_argv: list[str]) -> str:
    for flag in ("--model-path", "--model"):
        if flag in server_argv[:-1]:
            return server_argv[server_argv.index(flag) + 1]
    return ""


def capture_argv(launcher: Launcher, server_argv: list[str], env: dict[str, str], ctx: LaunchContext,
                 script: str | None = None) -> list[str]:
    """The launcher's argv that runs the capture script with the server's interpreter, in the server's
    environment (same image, mounts, GPUs and variables); `script` defaults to the capture script's text."""
    command = [_interpreter(server_argv), "-c", script if script is not None else _script()[0],
               _model_path(server_argv)]
    return launcher.render(command, env, _capture_ctx(launcher, ctx))


def _capture_ctx(launcher: Launcher, ctx: LaunchContext) -> LaunchContext:
    """docker names each container and pyxis each srun step (the capture needs its own name, apart from the
    server's); enroot's name is the imported image."""
    named = launcher.kind in ("docker", "pyxis")
    return replace(ctx, container_name=f"fingerprint-{ctx.container_name}") if named else ctx


def recorded_capture_argv(launcher: Launcher, server_argv: list[str], env: dict[str, str],
                          ctx: LaunchContext) -> list[str]:
    """`capture_argv` as recorded (its writer redacts the secrets): the script named by file and sha256 instead of
    its text."""
    return capture_argv(launcher, server_argv, env, ctx, script=f"<{CAPTURE_SCRIPT.name} sha256={_script()[1]}>")


def parse_capture(stdout: str) -> dict[str, Any] | None:
    """The JSON object of the last `HARNESS_FINGERPRINT_JSON ` line, or None."""

    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                data = json.loads(line[len(MARKER):])
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


def capture_in_server_env(launcher: Launcher, server_argv: list[str], env: dict[str, str], ctx: LaunchContext,
                          timeout_s: float = CAPTURE_TIMEOUT_S, should_stop: Callable[[], str | None] | None = None,
                          ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """Run the capture through the launcher; (captured keys or None, the `capture` record). It ends early,
    as a failed capture, after `timeout_s` or once `should_stop()` names a reason."""
    argv = capture_argv(launcher, server_argv, env, ctx)
    record: dict[str, Any] = {"argv": recorded_capture_argv(launcher, server_argv, env, ctx),
                              "script_sha256": _script()[1], "srt_slurm_commit": SRT_SLURM_COMMIT}
    start = time.monotonic()
    teardown = launcher.teardown(_capture_ctx(launcher, ctx))
    _remove(teardown)   # a capture container of this point that a killed run left behind
    try:
        returncode, stdout, stderr = _run_until(argv, launcher.process_env(env, ctx), timeout_s, should_stop)
    except (OSError, CaptureEnded) as exc:
        record.update(seconds=round(time.monotonic() - start, 1), error=f"{type(exc).__name__}: {exc}"[:500])
        _remove(teardown)   # a container left running by a capture that was stopped
        return None, record
    record.update(exit_code=returncode, seconds=round(time.monotonic() - start, 1))
    data = parse_capture(stdout)
    if data is None:
        tail = (stderr or stdout).strip().splitlines()[-3:]
        record["error"] = f"no fingerprint line in the capture's output (exit {returncode}): " + " | ".join(tail)
    else:
        detail = data.pop("capture", None)
        if isinstance(detail, dict):
            record.update(detail)
    return data, record


def _remove(teardown: list[str] | None) -> None:
    """Run the capture container's removal (`docker rm -f NAME`), if the launcher has one; never raises."""
    if not teardown:
        return
    try:
        subprocess.run(teardown, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        pass


class CaptureEnded(Exception):
    """The capture was killed: past its budget, or the point is stopping."""


def _run_until(argv: list[str], env: dict[str, str], timeout_s: float,
               should_stop: Callable[[], str | None] | None) -> tuple[int, str, str]:
    """(exit status, stdout, stderr); raises CaptureEnded (the process killed) past the budget or on a stop."""
    deadline = time.monotonic() + timeout_s
    with subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        while True:
            try:
                out, err = proc.communicate(timeout=0.5)
                return proc.returncode, out, err
            except subprocess.TimeoutExpired:
                reason = should_stop() if should_stop else None
                if reason or time.monotonic() > deadline:
                    proc.kill()
                    proc.communicate()
                    raise CaptureEnded(f"stopped: {reason}" if reason else f"ran past {timeout_s:.0f} s") from None


class BackgroundCapture:
    """`capture_in_server_env` in a thread, started beside the server's own start-up so it adds no time to a
    point; `result()` waits for it (bounded by the capture's own budget), `abandon()` kills it."""

    def __init__(self, launcher: Launcher, server_argv: list[str], env: dict[str, str], ctx: LaunchContext,
                 should_stop: Callable[[], str | None]):
        self._abandoned = threading.Event()
        self._result: tuple[dict[str, Any] | None, dict[str, Any]] = (None, {"error": "capture never ran"})

        def stop() -> str | None:
            return should_stop() or ("the point ended first" if self._abandoned.is_set() else None)

        def work() -> None:
            self._result = capture_in_server_env(launcher, server_argv, env, ctx, should_stop=stop)

        self._thread = threading.Thread(target=work, name="fingerprint-capture", daemon=True)
        self._thread.start()

    def result(self) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        self._thread.join()
        return self._result

    def abandon(self) -> None:
        self._abandoned.set()
        self._thread.join(timeout=30)


def image_digest(launcher_kind: str, image: str) -> dict[str, Any]:
    """The image's resolved digest where the runtime keeps one (docker's RepoDigests), else why not."""
    if launcher_kind != "docker":
        why = {"local": "no image: the server runs on this host",
               "enroot": "enroot keeps no registry digest of an imported image",
               "pyxis": "pyxis keeps no registry digest of the image it imports",
               "apptainer": "apptainer keeps no registry digest of a converted image"}
        return {"digest": None, "digest_reason": why.get(launcher_kind, f"launcher {launcher_kind}")}
    try:
        out = subprocess.run(["docker", "image", "inspect", "--format", "{{json .RepoDigests}}", image],
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"digest": None, "digest_reason": f"docker image inspect: {type(exc).__name__}: {exc}"}
    try:
        digests = json.loads(out.stdout) if out.returncode == 0 else None
    except ValueError:
        digests = None
    if not digests:
        return {"digest": None, "digest_reason": f"docker image inspect: {out.stderr.strip()[:200] or 'no digest'}"}
    return {"digest": digests[0], "digest_source": "docker image inspect .RepoDigests"}


def _harness() -> dict[str, Any]:
    from importlib import metadata

    try:
        version: str | None = metadata.version("agentic-bench-harness")
    except metadata.PackageNotFoundError:
        version = None
    return {**harness_commit(), "version": version}


def build_fingerprint(*, captured: dict[str, Any] | None, capture: dict[str, Any], server: dict[str, Any],
                      image: str, digest: dict[str, Any], engine: str, server_argv: list[str],
                      server_env: dict[str, str], launcher: str, harness: dict[str, Any] | None = None,
                      effective_env: dict[str, Any] | None = None) -> dict[str, Any]:
    """srt-slurm's keys (captured, or its sentinel) in its order, then the harness's extras alphabetically."""
    data: dict[str, Any] = dict(captured) if captured else {k: UNAVAILABLE for k in CAPTURED}
    if not captured:   # the packages are not in this fingerprint: say why
        data["packages_error"] = {"*": str(capture.get("error") or "the capture returned nothing")}
    data.update({
        "capture": _sorted(capture),
        "engine": engine,
        "harness": _sorted(harness if harness is not None else _harness()),
        "image": {"reference": image, **digest,
                  "env": {k: server_env[k] for k in IMAGE_ENV if k in server_env}},
        "launcher": launcher,
        "schema_version": SCHEMA_VERSION,
        "server": {"argv": list(server_argv), "env": dict(server_env), "server_info": _sorted(server),
                   **({"effective_env": _sorted(effective_env)} if effective_env is not None else {})},
    })
    ordered = {k: data[k] for k in FIELD_ORDER if k in data}
    ordered.update({k: data[k] for k in sorted(data) if k not in ordered})
    return ordered


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    return value

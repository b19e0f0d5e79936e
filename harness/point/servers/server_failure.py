"""Why a server failed, in its own words: the lines at the end of its log that explain it (an exception, an
import error, the container runtime's refusal), and whether the engine cannot run on this machine at all (SGLang
not installed where the server runs, no GPU, no image), when the simulator rehearsal is the way to try the point
here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# The reason codes of a point whose server did not start or did not last: its log says why.
SERVER_FAILURES = ("server_exited", "ready_timeout", "probe_failed", "server_crashed", "image_unavailable",
                   "mount_missing", "gpu_runtime_missing", "container_start_failed", "container_runtime_gone")
TAIL_BYTES = 64 * 1024
MAX_LINES = 4
LINE_CHARS = 240

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_ACCESS = re.compile(r'"(GET|POST|PUT|DELETE|HEAD) /|HTTP/1\.[01]" \d{3}')
_EXCEPTION = re.compile(r"^(\w+\.)*\w*(Error|Exception|Exit|Interrupt|Failure)\b:?")
_ERROR = re.compile(r"\b(ERROR|FATAL|CRITICAL|Error|error:|exception|No module named|not found|No such file|"
                    r"out of memory|Killed|denied|refused)\b", re.IGNORECASE)
_LOG_NAME = re.compile(r"\b((?:server|server_\w+|router)\.log):")

# What in a log shows that the engine cannot run on this machine at all, and how to say it.
_ENGINE_MISSING = (
    (re.compile(r"No module named '?(sglang|sgl_kernel)\b"), "SGLang is not installed where the server runs"),
    (re.compile(r"No CUDA GPUs are available|Found no NVIDIA driver|NVIDIA driver on your system is too old|"
                r"CUDA driver initialization failed|Torch not compiled with CUDA enabled|no CUDA-capable device|"
                r"NVIDIA-SMI has failed", re.IGNORECASE), "no usable GPU is visible here"),
    (re.compile(r"could not select device driver|nvidia-container-cli|unknown runtime", re.IGNORECASE),
     "the container runtime has no GPU support here"),
    (re.compile(r"Unable to find image|pull access denied|manifest unknown|repository does not exist|"
                r"failed to resolve reference|No such image", re.IGNORECASE), "the engine's image is not available here"),
)


@dataclass(frozen=True)
class LogExcerpt:
    """The log that explains a failed server, the lines of its end that say why, and (where the log shows it) why
    the engine cannot run on this machine."""

    path: Path
    lines: tuple[str, ...]
    engine_missing: str | None = None


def _clean(raw: str) -> str:
    line = _ANSI.sub("", raw.split("\r")[-1] if raw.rstrip("\r") else raw).strip()
    return line if len(line) <= LINE_CHARS else line[: LINE_CHARS - 1] + "…"


def meaningful(text: str) -> list[str]:
    """The log's lines worth reading: no blank lines, access-log lines or the harness's own notes."""
    out = []
    for raw in text.splitlines():
        line = _clean(raw)
        if line and not _ACCESS.search(line) and not line.startswith("[harness]") and any(c.isalnum() for c in line):
            out.append(line)
    return out


def explaining_lines(text: str, limit: int = MAX_LINES) -> list[str]:
    """The last lines of a log that say why the server failed: the exception line of the last traceback and the
    error lines before it; the last lines when none reads as an error."""
    lines = meaningful(text)
    if not lines:
        return []
    errors = [i for i, ln in enumerate(lines) if _EXCEPTION.match(ln) or _ERROR.search(ln)]
    if not errors:
        return lines[-min(limit, 3):]
    picked = [lines[i] for i in errors if not lines[i].startswith("File ")]
    return list(dict.fromkeys(picked))[-limit:]


def engine_missing(text: str) -> str | None:
    """Why the engine cannot run here (`SGLang is not installed where the server runs (No module named 'sglang')`),
    when the log shows it; None otherwise."""
    for pattern, why in _ENGINE_MISSING:
        found = pattern.search(text)
        if found:
            return f"{why} ({_clean(text[found.start():].splitlines()[0]).rstrip(')')})"
    return None


def read_tail(path: Path, size: int = TAIL_BYTES) -> str | None:
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, path.stat().st_size - size))
            return fh.read().decode(errors="replace")
    except OSError:
        return None


def key_line(path: Path) -> str | None:
    """The one line of a server log that says best why it failed (for the one-line reason in status.json)."""
    text = read_tail(path)
    found = explaining_lines(text, limit=1) if text else []
    return found[0] if found else None


def failure_excerpt(pdir: Path, reason: str | None) -> LogExcerpt | None:
    """The excerpt of the log of a point that failed for a server's reason (`reason` starts with one of
    SERVER_FAILURES): the log the reason names (a deployment's member), else `server.log`. None for other
    reasons, or when the log is absent or empty."""
    code = (reason or "").split(":", 1)[0]
    if code not in SERVER_FAILURES:
        return None
    named = _LOG_NAME.search(reason or "")
    path = pdir / (named.group(1) if named else "server.log")
    text = read_tail(path)
    if not text or not meaningful(text):
        return None
    return LogExcerpt(path, tuple(explaining_lines(text)), engine_missing(text))


def render_excerpt(excerpt: LogExcerpt, indent: str = "  ") -> list[str]:
    """The console lines of an excerpt: the log's path, then its lines that explain the failure."""
    return [f"{indent}{excerpt.path.name} ({excerpt.path}) ends with:",
            *(f"{indent}  {line}" for line in excerpt.lines)]

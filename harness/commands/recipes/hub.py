"""Reaching the Hugging Face hub from `harness traces stage`: a quick look (name lookup and TCP connect, a few
seconds) before a download, and a download's network failure as one line naming the host and the cause, so that
a machine without the internet gets its answer at once instead of after the hub client's retries."""

from __future__ import annotations

import os
import socket
import threading
from urllib.parse import urlsplit

from harness.errors import UserError, one_line

DEFAULT_ENDPOINT = "https://huggingface.co"
CONNECT_TIMEOUT_S = 5.0


def endpoint() -> str:
    """The hub the Hugging Face clients talk to: `HF_ENDPOINT`, else huggingface.co."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def _host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or url, parts.port or (80 if parts.scheme == "http" else 443)


def unreachable(url: str, timeout_s: float = CONNECT_TIMEOUT_S) -> str | None:
    """Why the hub at `url` cannot be reached from here (`HF_HUB_OFFLINE` set, its name does not resolve, the
    connection is refused or times out), within about `timeout_s` per step; None when a TCP connection opens."""
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        return "HF_HUB_OFFLINE is set"
    host, port = _host_port(url)
    found: list[object] = []
    lookup = threading.Thread(target=lambda: found.append(_resolve(host, port)), daemon=True)
    lookup.start()
    lookup.join(timeout_s)
    if not found:
        return f"looking up {host} took more than {timeout_s:g} s"
    if isinstance(found[0], str):
        return found[0]
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except TimeoutError:
        return f"connecting to {host}:{port} timed out after {timeout_s:g} s"
    except OSError as exc:
        return f"connecting to {host}:{port}: {exc.strerror or exc}"


def _resolve(host: str, port: int) -> object:
    try:
        return socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        return f"{host} does not resolve ({exc.strerror or exc})"


def check_reachable(what: str, spec: str, url: str | None = None) -> None:
    """Raise the one-line UserError of a stage of `what` (the corpus `spec`) that cannot reach the hub (see
    `unreachable`)."""
    url = url or endpoint()
    why = unreachable(url)
    if why is not None:
        raise UserError(f"cannot stage {what} from the hub at {url}: {why}", hint=offline_hint(spec))


def network_error(what: str, spec: str, exc: BaseException, url: str | None = None) -> UserError:
    """A download that failed on the network, as one line naming the host and the cause."""
    url = url or endpoint()
    cause = exc.__cause__ or exc.__context__
    detail = f"{type(exc).__name__}: {exc}" + (f" ({type(cause).__name__})" if cause is not None else "")
    return UserError(one_line(f"cannot stage {what} from the hub at {url}: {detail}", 400), hint=offline_hint(spec))


def offline_hint(spec: str) -> str:
    import shlex

    return ("stage it where the hub is reachable and copy the datasets cache here, or build it from a local copy "
            f"of its JSON-lines file: harness traces stage {shlex.quote(spec)} --from-file FILE")

"""Readiness: a server is ready when it is alive, `/health` answers 200, and a one-token chat completion
against the served model name succeeds — all within a finite budget.

It must also be the server this point launched: each launch passes its own token as `--weight-version`
(a label SGLang only reports), and the server answering `/health` must echo it in `/server_info`.

Liveness is checked on every poll, so a server that dies (or becomes a zombie) during loading is
noticed at once instead of after the budget.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from harness.point.servers.server_auth import auth_headers, unauthorized_message


class NotReady(Exception):
    """The server did not become ready; `reason` is a stable code, the message says why."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


def _get(url: str, timeout: float) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return int(resp.status)
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, OSError, TimeoutError):
        return 0


def served_launch_token(base_url: str, timeout: float = 10.0, api_key: str | None = None) -> str | None:
    """The `weight_version` the server answering at `base_url` reports in `/server_info` (SGLang echoes its
    `--weight-version` there); `<HTTP 404>`, `<not JSON>` or `<no weight_version>` when it answers without one
    (not an SGLang server launched with that token); None when it could not be asked (refused, timed out, 5xx).
    Raises NotReady(`unauthorized`) on a 401: the server wants an API key that `api_key` is not."""
    request = urllib.request.Request(f"{base_url}/server_info", headers=auth_headers(api_key))
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            data = json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            raise NotReady("unauthorized", unauthorized_message("/server_info", api_key)) from None
        return None if exc.code >= 500 else f"<HTTP {exc.code}>"
    except (urllib.error.URLError, OSError, TimeoutError):
        return None
    except ValueError:
        return "<not JSON>"
    value = data.get("weight_version") if isinstance(data, dict) else None
    return "<no weight_version>" if value is None else str(value)


def one_token_chat(base_url: str, model: str, timeout: float = 60.0, api_key: str | None = None) -> None:
    """Send a one-token chat completion; raise NotReady unless it returns a choice (`unauthorized` on a 401)."""
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": "ping"}],
                       "max_tokens": 1, "stream": False}).encode()
    req = urllib.request.Request(f"{base_url}/v1/chat/completions", data=body,
                                 headers={"Content-Type": "application/json", **auth_headers(api_key)})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            payload = json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            raise NotReady("unauthorized", unauthorized_message("the one-token chat completion", api_key)) from None
        detail = exc.read()[:200].decode(errors="replace")
        raise NotReady("probe_failed", f"one-token chat completion returned HTTP {exc.code}: {detail}") from None
    except (urllib.error.URLError, OSError, TimeoutError, ValueError) as exc:
        raise NotReady("probe_failed", f"one-token chat completion failed: {exc}") from None
    if not payload.get("choices"):
        raise NotReady("probe_failed", f"one-token chat completion returned no choices: {payload!r:.200}")


def wait_until_ready(base_url: str, model: str, exit_code: Callable[[], int | None], budget_s: float,
                     poll_s: float = 0.5, on_loading: Callable[[], None] | None = None,
                     should_stop: Callable[[], str | None] | None = None,
                     foreign: Callable[[], str | None] | None = None,
                     on_poll: Callable[[], None] | None = None, token: str | None = None,
                     api_key: str | None = None) -> None:
    """Poll until ready; raise NotReady(`server_exited` | `ready_timeout` | `probe_failed` | `stopped` |
    `port_in_use` | `unauthorized`). `api_key` is the server's `--api-key`, sent as a bearer token. `foreign` says who else answers on the port (None: our server, or unknown); it is asked
    whenever the port answers and once more before the server is declared ready, so another process is never
    taken for ours. `token` is this launch's own `--weight-version`: once `/health` is 200, the answering
    server's `/server_info` must echo it before any request is sent, which proves it is the launched server
    wherever the socket's owner cannot be read (another user's process, a root-owned container). `on_poll` is
    called before every wait (progress reporting)."""
    deadline = time.monotonic() + budget_s
    wait_until_healthy(base_url, exit_code, deadline, poll_s=poll_s, on_loading=on_loading, should_stop=should_stop,
                       foreign=foreign, on_poll=on_poll, token=token, api_key=api_key)
    wait_for_probe(base_url, model, exit_code, deadline, poll_s=poll_s, on_poll=on_poll, api_key=api_key)
    if foreign is not None:
        other = foreign()
        if other:
            raise NotReady("port_in_use", f"another process listens on the server's port: {other}")


def wait_until_healthy(base_url: str, exit_code: Callable[[], int | None], deadline: float, *, poll_s: float = 0.5,
                       on_loading: Callable[[], None] | None = None,
                       should_stop: Callable[[], str | None] | None = None,
                       foreign: Callable[[], str | None] | None = None,
                       on_poll: Callable[[], None] | None = None, token: str | None = None,
                       api_key: str | None = None, what: str = "server") -> None:
    """Poll until `/health` answers 200 (and `/server_info` echoes `token`) before the monotonic `deadline`."""
    budget_s = max(0.0, deadline - time.monotonic())
    loading_seen = False
    while True:
        code = exit_code()
        if code is not None:
            raise NotReady("server_exited", f"{what} exited with status {code} before it was ready")
        stop = should_stop() if should_stop else None
        if stop:
            raise NotReady("stopped", stop)
        status = _get(f"{base_url}/health", timeout=5)
        if status and foreign is not None:
            other = foreign()
            if other:
                raise NotReady("port_in_use", f"another process listens on the server's port: {other}")
        if status and not loading_seen:
            loading_seen = True
            if on_loading:
                on_loading()
        if status == 200:
            seen = served_launch_token(base_url, api_key=api_key) if token is not None else token
            if seen == token:
                return
            if seen is not None:
                raise NotReady("port_in_use", f"the server answering at {base_url} is not the one launched: its "
                                              f"/server_info gives {seen[:80]!r} as weight_version, not this "
                                              f"launch's token {token!r}")
        if time.monotonic() >= deadline:
            raise NotReady("ready_timeout", f"{what} /health not 200 after {budget_s:.0f} s (last status {status})")
        if on_poll:
            on_poll()
        time.sleep(poll_s)


def wait_for_probe(base_url: str, model: str, exit_code: Callable[[], int | None], deadline: float, *,
                   poll_s: float = 0.5, on_poll: Callable[[], None] | None = None,
                   api_key: str | None = None) -> None:
    """Send the one-token chat completion until it succeeds or the monotonic `deadline` passes."""
    while True:
        remaining = max(5.0, deadline - time.monotonic())
        try:
            one_token_chat(base_url, model, timeout=min(remaining, 600), api_key=api_key)
            break
        except NotReady as exc:
            if exc.reason == "unauthorized" or exit_code() is not None or time.monotonic() >= deadline:
                raise
            if on_poll:
                on_poll()
            time.sleep(poll_s)
    if exit_code() is not None:
        raise NotReady("server_exited", "server exited right after the readiness probe")


def server_info(base_url: str, api_key: str | None = None) -> dict[str, Any]:
    """What the server reports at `/server_info` (or the older `/get_server_info`), asked with the server's API
    key where it has one; `{"error": ...}` when neither answers."""
    for path in ("/server_info", "/get_server_info"):
        try:
            request = urllib.request.Request(base_url + path, headers=auth_headers(api_key))
            with urllib.request.urlopen(request, timeout=10) as resp:
                info: dict[str, Any] = json.loads(resp.read())
                return info
        except Exception as exc:  # try the older name, then report
            last = exc
    return {"error": f"{type(last).__name__}: {last}"}

"""API-key checks as SGLang makes them (`sglang/srt/utils/auth.py:decide_request_auth`, 0.5.20 and 0.5.23).

With `--api-key` set, every endpoint but the probes needs `Authorization: Bearer <key>`: paths starting with
`/health`, `/ready` or `/metrics` (and any OPTIONS request) stay open for load balancers and Prometheus. A
missing or wrong key gets 401 `{"error": "Unauthorized"}`. The admin-only endpoints: `/flush_cache` needs
`--admin-api-key` when that is set, else `--api-key`. Keys compare in constant time.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

OPEN_PREFIXES = ("/health", "/ready", "/metrics")
ADMIN_OPTIONAL = frozenset({"/flush_cache"})

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _bearer_matches(header: str | None, expected: str) -> bool:
    if not header:
        return False
    parts = header.split(" ", 1)
    return len(parts) == 2 and parts[0].lower() == "bearer" and secrets.compare_digest(parts[1], expected)


def allowed(method: str, path: str, authorization: str | None, api_key: str | None,
            admin_api_key: str | None) -> bool:
    """Whether SGLang lets this request through (no key configured: always)."""
    if method == "OPTIONS" or path.startswith(OPEN_PREFIXES):
        return True
    if path in ADMIN_OPTIONAL:
        key = admin_api_key or api_key
        return key is None or _bearer_matches(authorization, key)
    return api_key is None or _bearer_matches(authorization, api_key)


def middleware(api_key: str | None, admin_api_key: str | None) -> Middleware:
    """An aiohttp middleware enforcing `allowed`."""

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if not allowed(request.method, request.path, request.headers.get("Authorization"), api_key, admin_api_key):
            return web.json_response({"error": "Unauthorized"}, status=401)
        return await handler(request)

    return check

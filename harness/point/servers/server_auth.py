"""The API key a point's server was started with, and how the harness's own clients present it.

A recipe may start SGLang with `--api-key` (`args.api-key`). SGLang then answers `/health*`, `/ready*` and
`/metrics` without a key and 401s everything else (`/server_info`, `/model_info`, chat). The harness takes the
key from the plan, where it is held apart from the server's command (`harness.recipe.server_flags.secret_args`: joined to
the command only where the server starts; every file and log holds `<redacted>`); it sends it as
`Authorization: Bearer <key>` from the readiness probe, the launch-token check and the fingerprint's
`/server_info` read; lm-eval and AIPerf get it in their environment (`OPENAI_API_KEY`;
`HARNESS_AIPERF_API_KEY` through `harness.point.replay.aiperf_keyed`), never on a command line. A 401 is reported as its own reason,
`unauthorized`.
"""

from __future__ import annotations

API_KEY_ENV = "OPENAI_API_KEY"  # read by lm-eval's OpenAI-compatible clients


def auth_headers(api_key: str | None) -> dict[str, str]:
    """The header SGLang's API-key check expects; empty without a key."""
    return {} if api_key is None else {"Authorization": f"Bearer {api_key}"}


def client_env(api_key: str | None) -> dict[str, str]:
    """Environment for a client subprocess (AIPerf, lm-eval) that must present the key; empty without one."""
    return {} if api_key is None else {API_KEY_ENV: api_key}


def unauthorized_message(what: str, api_key: str | None) -> str:
    """Why a 401 happened, in words: the server wants a key the harness did not send or that it refuses."""
    sent = "sent the key of the plan's --api-key" if api_key is not None else "sent no key"
    return (f"{what} returned HTTP 401 Unauthorized: the server checks an API key (--api-key) and the harness "
            f"{sent}; another server with its own key may hold the port")

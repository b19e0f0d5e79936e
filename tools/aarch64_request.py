"""One streamed chat completion against a starting server: wait for /health, then POST /v1/chat/completions with
`stream: true` and check the stream (content chunks, a usage chunk, `data: [DONE]`). Standard library only, so
it runs under any interpreter; tools/aarch64-check.sh runs it in the emulated arm64 rootfs.

Usage: python aarch64_request.py BASE_URL MODEL [--ready-timeout S]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request


def wait_ready(base: str, timeout_s: float) -> float:
    """Seconds until GET /health answers 200; raises TimeoutError after `timeout_s`."""
    t0 = time.monotonic()
    last = "no answer"
    while time.monotonic() - t0 < timeout_s:
        try:
            with urllib.request.urlopen(base + "/health", timeout=5) as resp:
                if resp.status == 200:
                    return time.monotonic() - t0
                last = f"HTTP {resp.status}"
        except (urllib.error.URLError, OSError) as exc:
            last = str(exc)
        time.sleep(0.5)
    raise TimeoutError(f"{base}/health not ready after {timeout_s:.0f}s ({last})")


def stream_chat(base: str, model: str) -> dict[str, object]:
    """One streamed request; returns what the stream held. Raises ValueError when the stream is malformed."""
    body = {"model": model, "stream": True, "stream_options": {"include_usage": True}, "max_tokens": 32,
            "messages": [{"role": "user", "content": "Say hello from aarch64."}]}
    req = urllib.request.Request(base + "/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    t0 = time.monotonic()
    first: float | None = None
    chunks, text, usage, done = 0, "", None, False
    with urllib.request.urlopen(req, timeout=120) as resp:
        for raw in resp:
            line = raw.decode().strip()
            if not line.startswith("data:"):
                continue
            data = line[len("data:"):].strip()
            if data == "[DONE]":
                done = True
                break
            event = json.loads(data)
            if event.get("usage"):
                usage = event["usage"]
            for choice in event.get("choices", []):
                piece = (choice.get("delta") or {}).get("content") or ""
                if piece:
                    first = first if first is not None else time.monotonic() - t0
                    chunks += 1
                    text += piece
    if not done:
        raise ValueError("the stream ended without data: [DONE]")
    if chunks == 0 or usage is None:
        raise ValueError(f"the stream held {chunks} content chunk(s) and usage {usage}")
    return {"chunks": chunks, "chars": len(text), "usage": usage, "ttft_s": round(first or 0.0, 3),
            "total_s": round(time.monotonic() - t0, 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base")
    ap.add_argument("model")
    ap.add_argument("--ready-timeout", type=float, default=300.0)
    args = ap.parse_args(argv)
    base = args.base.rstrip("/")
    try:
        ready = wait_ready(base, args.ready_timeout)
        print(f"   ready after {ready:.1f}s")
        got = stream_chat(base, args.model)
    except (TimeoutError, ValueError, urllib.error.URLError, OSError) as exc:
        print(f"aarch64_request: {exc}", file=sys.stderr)
        return 1
    print(f"   streamed {got['chunks']} chunks ({got['chars']} chars), usage {got['usage']}, "
          f"first token {got['ttft_s']}s, total {got['total_s']}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

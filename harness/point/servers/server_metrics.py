"""SGLang's Prometheus `/metrics`: scrape, parse counters, and the achieved speculative accept length.

Achieved accept length over a window = (Δ`sglang:generation_tokens_total` − Δ`sglang:num_requests_total`)
/ Δ`sglang:spec_verify_calls_total`: every request's first token comes from prefill, not from a verify
step, so it is taken out of the numerator.
"""

from __future__ import annotations

import re
import urllib.request

_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(?P<value>[-+0-9.eEinfNa]+)")


def parse_counters(text: str) -> dict[str, float]:
    """Sum every sample of each metric name over its label sets."""
    totals: dict[str, float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if m:
            try:
                totals[m.group("name")] = totals.get(m.group("name"), 0.0) + float(m.group("value"))
            except ValueError:
                continue
    return totals


def scrape(base_url: str, timeout: float = 10.0) -> dict[str, float] | None:
    try:
        with urllib.request.urlopen(f"{base_url}/metrics", timeout=timeout) as resp:
            return parse_counters(resp.read().decode(errors="replace"))
    except Exception:  # metrics are optional (--enable-metrics); absence is reported by the caller
        return None


def scrape_all(urls: list[str], timeout: float = 10.0) -> dict[str, float] | None:
    """The counters of several servers (a deployment's workers) summed; None when one does not answer."""
    total: dict[str, float] = {}
    for url in urls:
        counters = scrape(url, timeout)
        if counters is None:
            return None
        for name, value in counters.items():
            total[name] = total.get(name, 0.0) + value
    return total


def achieved_accept_length(before: dict[str, float] | None, after: dict[str, float] | None,
                           ) -> tuple[float | None, str | None]:
    """(accept length, None) or (None, reason)."""
    if before is None or after is None:
        return None, "server /metrics unavailable (start the server with --enable-metrics)"
    names = ("sglang:generation_tokens_total", "sglang:num_requests_total", "sglang:spec_verify_calls_total")
    missing = [n for n in names if n not in after]
    if missing:
        return None, f"server /metrics lacks {', '.join(missing)}"
    gen, reqs, verify = (after[n] - before.get(n, 0.0) for n in names)
    if verify <= 0:
        return None, "no speculative verify steps in the window"
    return (gen - reqs) / verify, None

"""Point attributes, and each point's identity inside its curve.

A curve is one InferenceX series (`harness.report.results.series`), so its points may come from several configs and
one concurrency may appear more than once. What tells them apart is a point's attributes: its config (our
config key, or the InferenceX recipe fingerprint), image, hardware as named (`gb300-nv`), topology (`tp4ep4`,
or the disaggregated shape `disagg 1p1d tp4/tp4`), speculative method, DP attention and KV offload.

A point's identity is its concurrency plus the attributes that vary between the curve's measured points:
the config bare (`c4 cfgB`), the others in parentheses, defaults (no speculative method, no DP attention, no
KV offload) left out (`c24 (kv dram)`, `c8`). It names the point in tables, plots and the frontier.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.report.results.arms import AGG
from harness.report.results.configs import config_name
from harness.report.results.load import PointResult

# (attribute, its title in notes); a label writes the config, hardware and topology bare, DP attention as
# `dp-attention`, the others as `title value`.
ATTRIBUTES: tuple[tuple[str, str], ...] = (
    ("config", "config"),
    ("image", "image"),
    ("hw", "hw"),
    ("topology", "topology"),
    ("spec_decoding", "spec"),
    ("dp_attention", "dp-attention"),
    ("kv_offloading", "kv"),
)
DEFAULTS = {"spec_decoding": "none", "dp_attention": "false", "kv_offloading": "none"}
TITLES = dict(ATTRIBUTES)
_BARE = ("config", "hw", "topology")
UNNAMED = "(unnamed)"   # the config of an InferenceX row without a recipe fingerprint


def parallelism(p: PointResult) -> str:
    """A single deployment's parallelism as InferenceX names it: `tp4`, `tp4ep4`, `tp8pp2` (`?` unknown)."""
    if p.tp is None:
        return "?"
    out = f"tp{p.tp}" + (f"ep{p.ep}" if p.ep not in (None, 0, 1) else "")
    return out + (f"pp{p.pp}" if p.pp not in (None, 0, 1) else "")


def topology(p: PointResult) -> str:
    """`tp4ep4` for an aggregated point, the deployment's shape (`disagg 1p1d tp4/tp4`) otherwise."""
    return parallelism(p) if p.arm.disagg == AGG else p.arm.disagg


def attributes(p: PointResult) -> dict[str, str]:
    """Every attribute of a point, by name."""
    return {"config": config_name(p), "image": p.image or "unknown", "hw": p.hw or "unknown",
            "topology": topology(p), "spec_decoding": p.arm.spec_decoding, "dp_attention": p.arm.dp_attention,
            "kv_offloading": p.arm.kv_offloading}


def varying(points: Sequence[PointResult]) -> tuple[str, ...]:
    """The attributes whose value differs between the measured points (a point without a record has none)."""
    seen = [attributes(p) for p in points if p.recorded]
    return tuple(name for name, _ in ATTRIBUTES if len({a[name] for a in seen}) > 1)


def _word(name: str, value: str) -> str:
    if name == "dp_attention":
        return TITLES[name]
    return value if name in _BARE else f"{TITLES[name]} {value}"


def settings(p: PointResult, names: Sequence[str]) -> str:
    """The point's values of `names` other than its config, defaults left out: `kv dram`, `tp8ep8, spec mtp`."""
    if not p.recorded:
        return ""
    a = attributes(p)
    return ", ".join(_word(n, a[n]) for n in names if n != "config" and a[n] != DEFAULTS.get(n))


def identity(p: PointResult, names: Sequence[str]) -> str:
    """`c24`, `c24 (kv dram)`, `c4 cfgB (tp8ep8)`: the concurrency, the config where `names` holds it, the
    other attributes of `names` in parentheses."""
    config = config_name(p) if "config" in names else ""
    text = settings(p, names)
    return f"c{p.conc}" + (f" {config}" if config else "") + (f" ({text})" if text else "")


def identities(points: Sequence[PointResult]) -> list[str]:
    """Each point's identity in a curve of `points`; a repeat (never expected) is numbered `#2`, `#3`."""
    names = varying(points)
    out: list[str] = []
    for p in points:
        base = identity(p, names)
        label, n = base, 1
        while label in out:
            n += 1
            label = f"{base} #{n}"
        out.append(label)
    return out


def describe_point(p: PointResult) -> str:
    """Every attribute of a point in words (`config x, image y, hw gb300, topology tp4ep4, spec none, ...`)."""
    if not p.recorded:
        return f"config {config_name(p)} (no record)"
    return ", ".join(f"{title} {value or UNNAMED}" for (_, title), value in zip(ATTRIBUTES, attributes(p).values()))


def describe(points: Sequence[PointResult]) -> list[str]:
    """Notes over a curve's table: the attributes every measured point shares, and for each one that varies,
    which points hold each value (`kv none: c1, c5; kv dram: c24, c28`)."""
    recorded = [p for p in points if p.recorded]
    if not recorded:
        return []
    names = varying(points)
    first = attributes(recorded[0])
    shared = [f"{title} {first[n] or UNNAMED}" for n, title in ATTRIBUTES if n not in names]
    out = ["every point: " + ", ".join(shared)] if shared else []
    by_config = ["config"] if "config" in names else []
    for n in names:
        holders: dict[str, list[str]] = {}
        for p in recorded:
            holders.setdefault(attributes(p)[n], []).append(identity(p, by_config if n != "config" else []))
        out.append("varies: " + "; ".join(f"{TITLES[n]} {v or UNNAMED}: {', '.join(ids)}"
                                          for v, ids in holders.items()))
    return out


def offloaded(p: PointResult) -> bool:
    """Whether the point offloads KV cache (it gets its own marker on the curve's line)."""
    return p.arm.kv_offloading not in ("none", "")

"""The arm of a result: the serving settings that tell two configs of one series apart.

Two results of one model, precision, hardware and parallelism are different arms when they differ in
speculative decoding, KV offloading, DP attention, disaggregation shape (prefill/decode workers and their
parallelism) or recipe fingerprint. A report draws every arm of a series on one curve, as point attributes
(`harness.report.results.attributes`); the arm keeps configs apart (`harness.report.results.configs`), so `harness compare`
never pairs two of them without being asked. InferenceX gives one recipe one fingerprint across all its
concurrencies, so for InferenceX rows the fingerprint is part of the arm. A recipe of this harness may give
single points their own server overrides (and so their own per-point fingerprint), so our own records are
identified by config key and the fingerprint is compared only where the caller asks for it.

Missing fields read as InferenceX-app reads them: no `spec_decoding` or `kv_offloading` is `none`, no
`dp_attention` is `false`, no prefill/decode fields is an aggregated (single-worker) deployment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.point.record.multinode_row import deployment_shape

ARM_FIELDS = ("spec_decoding", "kv_offloading", "dp_attention", "disagg", "recipe_fingerprint")
AGG = "agg"


@dataclass(frozen=True)
class Arm:
    """One serving arm. `disagg` is `agg` or the disaggregated shape, e.g. `disagg 1P tp4/ep4 + 2D tp8/ep8 dpa`."""

    spec_decoding: str = "none"
    kv_offloading: str = "none"
    dp_attention: str = "false"
    disagg: str = AGG
    recipe_fingerprint: str | None = None

    def without_fingerprint(self) -> Arm:
        return Arm(self.spec_decoding, self.kv_offloading, self.dp_attention, self.disagg, None)

    def label(self) -> str:
        """The parts that are not the default, e.g. `mtp, kv dram, dp-attention, recipe 1a2b3c4d`."""
        parts = []
        if self.spec_decoding != "none":
            parts.append(self.spec_decoding)
        if self.kv_offloading != "none":
            parts.append(f"kv {self.kv_offloading}")
        if self.dp_attention == "true":
            parts.append("dp-attention")
        if self.disagg != AGG:
            parts.append(self.disagg)
        if self.recipe_fingerprint:
            parts.append(f"recipe {self.recipe_fingerprint[:8]}")
        return ", ".join(parts)

    def differences(self, other: Arm) -> list[str]:
        """`field mine vs theirs` for every arm field that differs (fingerprints shortened). The fingerprint
        counts only where both arms carry one: our own records leave it out of their curve's arm."""
        out = []
        for name in ARM_FIELDS:
            a, b = getattr(self, name), getattr(other, name)
            if name == "recipe_fingerprint":
                if a is None or b is None or a == b:
                    continue
                a, b = _short(a), _short(b)
            if a != b:
                out.append(f"{name} {a} vs {b}")
        return out

    def as_json(self) -> dict[str, str | None]:
        return {name: getattr(self, name) for name in ARM_FIELDS}


def _short(fp: str | None) -> str:
    return f"{fp[:12]}…" if fp and len(fp) > 12 else (fp or "none")


def _flag(value: Any) -> str:
    """InferenceX's `dp_attention` strings; a JSON boolean (our records) reads the same."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "true" if str(value).strip().lower() in ("true", "1", "yes") else "false"


def disagg_shape(d: Mapping[str, Any]) -> str:
    """`agg`, or `disagg`/`multinode` with the deployment's shape as InferenceX names it (`disagg 1p1d tp4/tp4`,
    `multinode 2x tp4`), from InferenceX's v2 per-role fields."""

    disagg = d.get("disagg") is True or str(d.get("disagg")).lower() == "true"
    kind = "disagg" if disagg else "multinode"
    if any(f"{role}_tp" in d for role in ("prefill", "decode")):
        return f"{kind} {deployment_shape(d)}"
    return kind if kind == "disagg" else AGG


def arm_of(d: Mapping[str, Any]) -> Arm:
    """The arm a result object (our record, our published row, or an InferenceX row) describes. Our record
    keeps the exact speculative algorithm in `spec_decoding` and InferenceX's label beside it; the arm uses
    the label, so a record and its published row name one arm."""
    fp = d.get("recipe_fingerprint")
    return Arm(
        spec_decoding=str(d.get("inferencex_spec_decoding") or d.get("spec_decoding") or "none"),
        kv_offloading=str(d.get("kv_offloading") or "none"),
        dp_attention=_flag(d.get("dp_attention")),
        disagg=disagg_shape(d),
        recipe_fingerprint=fp if isinstance(fp, str) and fp else None,
    )

"""The InferenceX-app series a result belongs to: the unit a published AgentX curve is drawn and counted on.

InferenceX-app draws one curve per series of the selected model and scenario, keyed `${hwKey}_${precision}`,
where `hwKey` is the base GPU (`hw` up to its first `-`: `gb300-nv` and `gb300-cw` are both `gb300`) joined by
`_` to the framework's canonical name; an AgentX series adds no speculative-decoding suffix. Everything else a
row names (parallelism, DP attention, speculative method, KV offload, image, aggregated or disaggregated,
recipe fingerprint) is an attribute of a point inside the series. InferenceX's Pareto coverage counts the
same unit: `model/scenario/hwKey/precision`.

The model is InferenceX's model prefix (`infmax_model_prefix`, in its rows and in our records), else the last part
of its model path (records written before they carried the prefix).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# InferenceX-app's legacy framework names and their canonical form
# (`packages/constants/src/framework-aliases.ts`, FRAMEWORK_ALIASES).
FRAMEWORK_ALIASES = {
    "atom-disagg": "mooncake-atom",
    "sglang-disagg": "mori-sglang",
    "trtllm": "trt",
    "dynamo-trtllm": "dynamo-trt",
}
AGENTIC = "agentic-coding"


def framework_alias(framework: str) -> str:
    """The canonical framework name, lowercased (`trtllm` -> `trt`, `SGLang` -> `sglang`)."""
    fw = framework.lower()
    return FRAMEWORK_ALIASES.get(fw, fw)


def hardware_key(hw: str, framework: str) -> str:
    """`gb300-nv` + `sglang` -> `gb300_sglang`; without a framework, the base GPU alone."""
    base = hw.split("-")[0]
    return f"{base}_{framework_alias(framework)}" if framework else base


@dataclass(frozen=True)
class Series:
    """One InferenceX-app series: model, scenario, hardware key (base GPU + framework), precision."""

    model: str
    scenario: str
    hw_key: str
    precision: str

    @property
    def name(self) -> str:
        """`model/scenario/hwKey/precision`, as InferenceX's Pareto coverage keys a series."""
        return "/".join((self.model or "?", self.scenario or "?", self.hw_key or "?", self.precision or "?"))

    def as_json(self) -> dict[str, str]:
        return {"model": self.model, "scenario": self.scenario, "hw_key": self.hw_key, "precision": self.precision}


def model_name(d: Mapping[str, Any]) -> str:
    """InferenceX's model prefix, else the last part of the model path."""
    return str(d.get("infmax_model_prefix") or d.get("model") or "").rstrip("/").split("/")[-1]


def series_of(d: Mapping[str, Any], hw: str) -> Series:
    """The series of a result object; `hw` is the hardware as read (`sim` for every simulated result)."""
    return Series(model=model_name(d), scenario=str(d.get("scenario_type") or AGENTIC),
                  hw_key=hardware_key(hw, str(d.get("framework") or "")), precision=str(d.get("precision") or ""))

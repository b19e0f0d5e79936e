"""Building blocks shared by the recipe models and the recipe's `deployment:` section: the strict base model,
flag values, environment names and values, checked text, and the parallelism and KV offload of one server or
worker."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from harness.inputs.yaml_input import short

ArgValue = str | int | float | bool | list[str | int | float]
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

def _env_value(value: Any) -> Any:
    """Environment values are strings; YAML numbers are accepted and written as given."""
    if isinstance(value, bool):
        raise ValueError(f"environment values are strings: quote {str(value).lower()!r}")  # noqa: TRY004 (pydantic reports ValueError)
    if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
        return str(value)
    return value


def check_env_value(value: str) -> str:
    """An environment value the kernel accepts: no NUL byte."""
    if "\x00" in value:
        raise ValueError("an environment value cannot hold a NUL byte")
    return value


def check_env_name(name: str) -> str:
    """A portable environment variable name: letters, digits and `_`, not starting with a digit."""
    if not ENV_NAME.match(name):
        raise ValueError(f"{short(name)} is not an environment variable name (letters, digits, _; "
                         "not starting with a digit)")
    return name


EnvName = Annotated[str, AfterValidator(check_env_name)]
EnvValue = Annotated[str, BeforeValidator(_env_value, json_schema_input_type=str | int | float),
                     AfterValidator(check_env_value)]
OptEnvValue = Annotated[str | None, BeforeValidator(lambda v: v if v is None else _env_value(v),
                                                    json_schema_input_type=str | int | float | None),
                        AfterValidator(lambda v: v if v is None else check_env_value(v))]
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _no_control(value: str) -> str:
    """A name or path that is rendered into argv, files and one-line messages: no newline, tab or other
    control character."""
    found = _CONTROL.search(value)
    if found:
        raise ValueError(f"must not contain control characters (found {found.group()!r})")
    return value


def _non_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return _no_control(value)


Text = Annotated[str, AfterValidator(lambda v: _non_blank(v))]
SecretName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")]
PathText = Annotated[str, AfterValidator(_no_control)]


def _takes_bool(annotation: Any) -> bool:
    """Whether a field's type accepts a boolean anywhere in it (`ArgValue` does; `int`, `float` do not)."""
    return annotation is bool or any(_takes_bool(a) for a in get_args(annotation))


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _bools_are_not_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """YAML's `true` is not 1: a boolean (or a list holding one) for a field that takes none is refused."""
        field = cls.model_fields.get(info.field_name or "")
        has_bool = isinstance(value, bool) or (isinstance(value, list) and any(isinstance(v, bool) for v in value))
        if field is not None and has_bool and not _takes_bool(field.annotation):
            raise ValueError(f"expected a number or text, got a boolean ({short(value)})")
        return value


class Parallelism(Strict):
    tp: int = Field(default=1, ge=1, description="tensor parallel size (`--tp-size`)")
    ep: int = Field(default=1, ge=1, description="expert parallel size (`--ep-size`, rendered when > 1)")
    pp: int = Field(default=1, ge=1, description="pipeline parallel size (`--pp-size`, rendered when > 1)")
    dp_attention: int | None = Field(default=None, ge=2, description=(
        "DP attention with this many attention data-parallel groups inside tp (`--attn-dp-size N` where the "
        "pinned SGLang has it, else `--enable-dp-attention --dp-size N`; tp must be divisible by N)"))
    dcp: int = Field(default=1, ge=1, description=(
        "decode context parallel size (`--dcp-size`, rendered when > 1; runs inside tp)"))
    pcp: int = Field(default=1, ge=1, description=(
        "prefill context parallel size (`--pcp-size`, rendered when > 1, only where the pinned SGLang has it)"))


class KvOffload(Strict):
    kind: Literal["none", "dram"] = Field(default="none", description="`dram` = HiCache in host memory (`--enable-hierarchical-cache`)")
    hicache_size_gb: int | None = Field(default=None, ge=1, description="`--hicache-size` (GB of host pool per rank)")
    write_policy: Literal["write_through", "write_back", "write_through_selective"] | None = Field(default=
        None, description="`--hicache-write-policy`")

    @model_validator(mode="after")
    def _dram_only(self) -> KvOffload:
        if self.kind == "none" and (self.hicache_size_gb is not None or self.write_policy is not None):
            raise ValueError("hicache_size_gb and write_policy need kind: dram")
        return self

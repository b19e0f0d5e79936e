"""Where a line says how many more problems or names there are, it names them (up to a bound, past which it says
how many are left unnamed)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError

from harness.errors import and_more, pydantic_error_line
from harness.traces.schema import trace_error_line


class _Two(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int
    b: int


def _errors() -> ValidationError:
    with pytest.raises(ValidationError) as info:
        _Two.model_validate({"a": "x", "b": "y"})
    return info.value


def test_the_rest_is_named() -> None:
    assert and_more([]) == ""
    assert and_more(["b: bad"]) == " (and 1 more: b: bad)"
    assert and_more([str(i) for i in range(12)], most=10) == " (and 12 more: 0; 1; 2; 3; 4; 5; 6; 7; 8; 9; 2 unnamed)"


def test_validation_lines_name_every_other_error() -> None:
    assert pydantic_error_line("f.yaml", _errors()) == (
        "f.yaml: a: Input should be a valid integer, unable to parse string as an integer "
        "(and 1 more: b: Input should be a valid integer, unable to parse string as an integer)")
    assert trace_error_line("t.jsonl", {"id": "t1"}, _errors()).endswith(
        "(and 1 more: b: Input should be a valid integer, unable to parse string as an integer)")

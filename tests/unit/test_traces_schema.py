"""Strict Weka v1 models and local loaders: one-line errors naming trace, request path and field."""

import json
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.traces import load_corpus
from harness.traces.files import read_local, write_corpus
from harness.traces.schema import Subagent, parse_trace, walk_calls, walk_subagents

HAND = Path(__file__).parents[1] / "fixtures" / "traces" / "hand"


def _trace(**overrides: object) -> dict:
    raw = json.loads((HAND / "hand-a.json").read_text())
    raw.update(overrides)
    return raw


def _error(raw: object) -> str:
    with pytest.raises(UserError) as info:
        parse_trace(raw, "x.json")
    msg = str(info.value)
    assert "\n" not in msg
    return msg


def test_fixture_parses_with_nesting() -> None:
    trace = parse_trace(_trace(), "x.json")
    assert [loc.where for loc in walk_calls(trace)] == [
        "requests[0]", "requests[1]", "requests[2].requests[0]", "requests[3]"]
    (path, sa), = walk_subagents(trace)
    assert path == (2,) and isinstance(sa, Subagent) and sa.agent_id == "agent_001"
    assert trace.to_json_dict()["requests"][0]["in"] == 100


def test_nested_subagents_are_accepted() -> None:
    raw = _trace()
    inner = raw["requests"][2]
    inner["requests"].append({**inner, "agent_id": "agent_002", "t": 3.6,
                              "requests": [dict(inner["requests"][0], t=3.7)]})
    trace = parse_trace(raw, "x.json")
    assert max(loc.depth for loc in walk_calls(trace)) == 2


def test_error_names_trace_request_path_and_field() -> None:
    raw = _trace()
    raw["requests"][2]["requests"][0]["in"] = "many"
    msg = _error(raw)
    assert msg.startswith("x.json: trace hand-a: requests[2].requests[0].in: ")


def test_unknown_field_is_rejected() -> None:
    raw = _trace()
    raw["requests"][1]["prompt"] = "hi"
    assert _error(raw).startswith("x.json: trace hand-a: requests[1].prompt: Extra inputs are not permitted")


def test_bad_type_tag_and_stop() -> None:
    raw = _trace()
    raw["requests"][0]["type"] = "x"
    assert "requests[0]: type must be one of 'n', 's', 'subagent'" in _error(raw)
    raw = _trace()
    raw["requests"][3]["stop"] = "tool-use"
    assert _error(raw).startswith("x.json: trace hand-a: requests[3].stop: ")


def test_negative_and_missing_values() -> None:
    raw = _trace()
    raw["requests"][1]["hash_ids"] = [0, -1]
    assert "requests[1].hash_ids[1]: " in _error(raw)
    raw = _trace()
    del raw["block_size"]
    assert _error(raw).startswith("x.json: trace hand-a: block_size: Field required")
    assert _error([1]).startswith("x.json: expected a JSON object")


def test_directory_jsonl_and_file_loaders(tmp_path: Path) -> None:
    corpus = load_corpus(HAND)
    assert [t.id for t in corpus.traces] == ["hand-a", "hand-b"]
    out = write_corpus(corpus, tmp_path / "all.jsonl")
    assert [t.id for t in read_local(out).traces] == ["hand-a", "hand-b"]
    assert load_corpus(HAND / "hand-b.json").traces[0].id == "hand-b"
    write_corpus(corpus, tmp_path / "dir")
    assert read_local(tmp_path / "dir").traces == corpus.traces


def test_jsonl_errors_carry_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = (HAND / "hand-b.json").read_text().replace("\n", "")
    path.write_text(good + "\n\n{not json\n")
    with pytest.raises(UserError, match=r"t.jsonl:3: invalid JSON"):
        load_corpus(path)
    path.write_text(good + "\n" + good + "\n")
    with pytest.raises(UserError, match=r"t.jsonl:2: trace hand-b: id: duplicate of the trace in .*t.jsonl:1"):
        load_corpus(path)


def test_missing_and_empty_paths(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no such file"):
        load_corpus(tmp_path / "nope")
    with pytest.raises(UserError, match="no traces found"):
        load_corpus(tmp_path)

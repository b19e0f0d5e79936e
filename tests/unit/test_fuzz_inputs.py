"""Property-based fuzzing of the inputs a user writes, one generator per way they have failed: explicit YAML tags
(`!!int 1e3`, `!!python/object:...`, `!custom`) anywhere in a recipe or a cluster profile are refused in one
line naming the tag, and in a `--set` value they are the text as written; trace ids of any length and any characters are written as a corpus directory
and read back unchanged; a big trace file is read with memory in proportion to its size.

Examples per generator: `HARNESS_FUZZ_EXAMPLES` (default 60; `benchmarks/fuzz_readers.sh` runs more)."""

from __future__ import annotations

import json
import os
import re
import tempfile
import tracemalloc
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.errors import UserError, one_line
from harness.inputs.yaml_input import load_yaml
from harness.recipe.load import load_recipe
from harness.traces.files import read_dir, read_json_file, trace_file_name, write_dir
from harness.traces.schema import Corpus, parse_trace
from slurm.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
RECIPE = (ROOT / "recipes" / "quickstart-sim.yaml").read_text()
PROFILE = (ROOT / "clusters" / "local-ci.yaml").read_text()
TRACE = {"id": "t", "models": ["m"], "block_size": 16, "hash_id_scope": "local",
         "requests": [{"type": "n", "t": 0.5, "model": "m", "in": 10, "out": 2, "hash_ids": [1]}]}
FUZZ = settings(max_examples=int(os.environ.get("HARNESS_FUZZ_EXAMPLES", "60")), deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TAGS = st.sampled_from(["!!int", "!!float", "!!str", "!!bool", "!!null", "!!binary", "!!timestamp", "!!seq",
                        "!!map", "!!set", "!!omap", "!!python/object:os.system", "!!python/name:os.system",
                        "!!python/tuple", "!custom", "!<tag:yaml.org,2002:int>", "!e!x"]) | \
    st.from_regex(r"\A!!?[a-z][a-z0-9/:._-]{0,20}\Z")
SCALARS = st.sampled_from(["1e3", "0x10", "1", "true", "~", "''", "abc", "2024-01-01", "[1, 2]", "{a: 1}", "-.inf"])
# a value position of a line `key: value` (not a comment, not a block start)
_VALUE = re.compile(r"^(?P<head>\s*(?:- )?[A-Za-z_][\w.-]*: )(?P<value>[^#\s{\[&*!|>][^#]*)$")


def _value_lines(text: str) -> list[int]:
    return [i for i, line in enumerate(text.splitlines()) if _VALUE.match(line)]


def _tagged(text: str, line: int, tag: str, scalar: str) -> str:
    lines = text.splitlines()
    m = _VALUE.match(lines[line])
    assert m is not None
    lines[line] = f"{m.group('head')}{tag} {scalar}"
    return "\n".join(lines) + "\n"


def _refused_naming_a_tag(load: object, text: str, name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text(text)
        try:
            load(path)   # type: ignore[operator]
        except UserError as exc:
            message = str(exc)
            assert message == one_line(message) and len(message) <= 600, message
            assert "YAML tag" in message, message
        else:
            raise AssertionError(f"a tagged value was accepted:\n{text}")


@FUZZ
@given(st.data(), TAGS, SCALARS)
def test_an_explicit_tag_anywhere_in_a_recipe_is_refused_naming_it(data: st.DataObject, tag: str, scalar: str) -> None:
    line = data.draw(st.sampled_from(_value_lines(RECIPE)))
    _refused_naming_a_tag(load_recipe, _tagged(RECIPE, line, tag, scalar), "r.yaml")


@FUZZ
@given(st.data(), TAGS, SCALARS)
def test_an_explicit_tag_anywhere_in_a_cluster_profile_is_refused_naming_it(data: st.DataObject, tag: str,
                                                                            scalar: str) -> None:
    line = data.draw(st.sampled_from(_value_lines(PROFILE)))
    _refused_naming_a_tag(load_profile, _tagged(PROFILE, line, tag, scalar), "c.yaml")


@FUZZ
@given(st.sampled_from(["client.seed", "client.duration_s", "args.max-running-requests", "description"]), TAGS,
       SCALARS)
def test_an_explicit_tag_in_a_set_value_is_taken_as_its_text(key: str, tag: str, scalar: str) -> None:
    """A `--set` value is never a tagged object: it is the text as written, which a typed field refuses in one line."""
    from harness.recipe.points import apply_overrides, parse_override

    text = f"{tag} {scalar}"
    assert parse_override(f"{key}={text}") == (key.split("."), text)
    recipe = load_recipe(ROOT / "recipes" / "quickstart-sim.yaml")
    try:
        recipe, _ = apply_overrides(recipe, None, [f"{key}={text}"], "r.yaml")
    except UserError as exc:
        assert str(exc) == one_line(str(exc)) and len(str(exc)) <= 600, str(exc)
    else:
        if key == "description":
            assert recipe.description == text


def test_the_tag_generator_reaches_the_shared_yaml_reader() -> None:
    try:
        load_yaml("a: !!int 1e3\n", "s")
    except UserError as exc:
        assert "'!!int'" in str(exc)
    else:
        raise AssertionError("!!int 1e3 was accepted")


IDS = st.text(min_size=1, max_size=400) | st.text(alphabet="ab/.\\\n é\ud800", min_size=1, max_size=300) | \
    st.integers(120, 600).map(lambda n: "x" * n)


@FUZZ
@given(st.lists(IDS, min_size=1, max_size=4, unique=True))
def test_any_trace_ids_are_written_as_a_directory_and_read_back_unchanged(ids: list[str]) -> None:
    traces = []
    for trace_id in ids:
        try:
            traces.append(parse_trace({**TRACE, "id": trace_id}, "fuzz"))
        except UserError:
            continue    # an id the schema refuses never reaches a file name
    if not traces or len({trace_file_name(t.id) for t in traces}) < len(traces):
        return
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_dir(Corpus(traces=tuple(traces), source="fuzz"), Path(tmp) / "out")
        assert all(len(p.name.encode("utf-8", "surrogatepass")) <= 200 for p in paths)
        assert sorted(t.id for t in read_dir(Path(tmp) / "out").traces) == sorted(t.id for t in traces)


@settings(max_examples=max(3, int(os.environ.get("HARNESS_FUZZ_EXAMPLES", "60")) // 20), deadline=None,
          derandomize=True)
@given(st.integers(1, 24), st.sampled_from([" ", "\n", "\t"]))
def test_a_big_trace_file_is_read_with_memory_in_proportion_to_its_size(mib: int, blank: str) -> None:
    body = json.dumps(TRACE).encode()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        path.write_bytes(blank.encode() * (mib * 1024 * 1024) + body)
        size = path.stat().st_size
        tracemalloc.start()
        try:
            trace = read_json_file(path)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert trace.id == "t"
        assert peak < 4 * size + 16 * 1024 * 1024, (peak, size)   # a buffer of the 4 GiB bound would be far over

"""Property-based fuzzing of every loader: whatever the bytes, reading ends in a value or a one-line
UserError (the CLI's exit status 2), never another exception, within the time hypothesis allows per input."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import changelog
from harness.errors import UserError, one_line
from harness.recipe import golden
from harness.recipe.load import load_recipe
from harness.traces.files import read_local
from slurm.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
SEEDS = {
    "recipe": (ROOT / "recipes" / "quickstart-sim.yaml").read_bytes(),
    "profile": (ROOT / "clusters" / "local-ci.yaml").read_bytes(),
    "golden": b"m:\n  thinking_on: {1: 1.5, 2: 2.25}\n",
    "changelog": (ROOT / "perf-changelog.yaml").read_bytes(),
    "trace": (b'{"id": "t", "models": ["m"], "block_size": 16, "hash_id_scope": "local", "requests": '
              b'[{"type": "n", "t": 0.5, "model": "m", "in": 10, "out": 2, "hash_ids": [1]}]}'),
}
FRAGMENTS = [b"&a [*a]", b"*a", b"&a", b"[[[[[[[[", b"]]]]", b"{", b"}", b": ", b"\n  ", b"\n", b"\xff", b"\x00",
             b".inf", b"-.nan", b"9" * 400, b"Infinity", b"NaN", b"<<: *a", b"? ", b"- ", b'"', b"'", b"!!python/object",
             b"\t", b"\r", b"---\n", b"~", b"null", b"1e999", b"-1", b"0", b"99:99:99", b"c0", b"c999999999"]


@st.composite
def mutated(draw: st.DrawFn, seed: bytes) -> bytes:
    data = bytearray(seed)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "repeat"]))
        piece = draw(st.one_of(st.sampled_from(FRAGMENTS), st.binary(max_size=8)))
        if op == "insert":
            data[at:at] = piece
        elif op == "delete":
            del data[at:at + draw(st.integers(1, 40))]
        elif op == "replace":
            data[at:at + len(piece)] = piece
        else:
            data[at:at] = bytes(data[at:at + 30]) * draw(st.integers(2, 50))
    return bytes(data)


def _golden(path: Path) -> Any:
    golden._load_curve.cache_clear()
    return golden.load_curve(path.stem, path.parent)


def _changelog(path: Path) -> Any:
    entries, problems = changelog.validate(path.read_bytes(), str(path))
    for problem in problems:
        assert problem == one_line(problem), problem
    return entries


LOADERS: dict[str, tuple[str, Callable[[Path], Any]]] = {
    "recipe": ("r.yaml", load_recipe),
    "profile": ("c.yaml", load_profile),
    "golden": ("curve.yaml", _golden),
    "changelog": ("perf-changelog.yaml", _changelog),
    "trace": ("t.json", read_local),
}
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)


def _holds(kind: str, data: bytes) -> None:
    name, load = LOADERS[kind]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        (Path(tmp) / "traces").symlink_to(ROOT / "recipes" / "traces")
        try:
            load(path)
        except UserError as exc:
            message = str(exc)
            assert message, kind
            assert len(one_line(message)) <= 600


@FUZZ
@given(st.data())
def test_recipe_loader(data: st.DataObject) -> None:
    _holds("recipe", data.draw(mutated(SEEDS["recipe"])))


@FUZZ
@given(st.data())
def test_cluster_profile_loader(data: st.DataObject) -> None:
    _holds("profile", data.draw(mutated(SEEDS["profile"])))


@FUZZ
@given(st.data())
def test_golden_loader(data: st.DataObject) -> None:
    _holds("golden", data.draw(mutated(SEEDS["golden"])))


@FUZZ
@given(st.data())
def test_changelog_loader(data: st.DataObject) -> None:
    _holds("changelog", data.draw(mutated(SEEDS["changelog"])))


@FUZZ
@given(st.data())
def test_trace_loader(data: st.DataObject) -> None:
    _holds("trace", data.draw(mutated(SEEDS["trace"])))


@FUZZ
@given(st.text(max_size=200))
def test_set_overrides(text: str) -> None:
    from harness.recipe.points import apply_overrides

    recipe = load_recipe(ROOT / "recipes" / "quickstart-sim.yaml")
    try:
        apply_overrides(recipe, None, [text], "r.yaml")
    except UserError as exc:
        assert len(one_line(str(exc))) <= 600

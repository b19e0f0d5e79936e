"""Bad input to every loader ends in one line naming the file (and line), exit status 2, never a traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
BASE = (ROOT / "recipes" / "quickstart-sim.yaml").read_text()
BOMB = "x0: &a0 [1,1,1,1,1,1,1,1,1]\n" + "".join(
    f"x{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 9))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli_main(list(argv))
    err = capsys.readouterr().err
    return code, err


def one_error_line(code: int, err: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    assert len(lines[0]) <= 620, len(lines[0])
    return lines[0]


def recipe(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "r.yaml"
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)  # type: ignore[operator]
    (tmp_path / "traces").symlink_to(ROOT / "recipes" / "traces")
    return str(path)


@pytest.mark.parametrize(("text", "expected"), [
    (b"config_key: x\n\xff\xfe\n", r"r\.yaml:2: not UTF-8 text \(byte 0xff\)"),
    (BASE + BOMB, r"r\.yaml:\d+: aliases expand to more than 100000 values"),
    ("a: " + "[" * 5000 + "]" * 5000 + "\n", r"r\.yaml:1: not valid YAML: nested deeper than 64 levels"),
    ("a: &x [*x]\n", r"r\.yaml:1: an alias refers to the value that contains it"),
    ("a: &x {b: *x}\n", r"r\.yaml:1: an alias refers to the value that contains it"),
    (BASE.replace("seed: 42", "seed: " + "9" * 5000), r"r\.yaml:\d+: not valid YAML: an integer of 5000 digits"),
    (BASE.replace("grace_s: 10", "grace_s: .inf"), r"r\.yaml:\d+: client\.grace_s: Input should be a finite number"),
    (BASE.replace("  c8:", "  c1000000:"), r"r\.yaml:\d+: points\.c1000000: point names are concurrencies from 1"),
    (BASE.replace("image: lmsysorg/sglang:v0.5.23-cu130", "image: ' '"), r"r\.yaml:\d+: image: must not be empty"),
    (BASE.replace("  path: demo/agentic-coder-8b", "  path: ''"), r"r\.yaml:\d+: model\.path: must not be empty"),
    (BASE.replace("  served_name: agentic-coder", "  served_name: ''"), r"model\.served_name: must not be empty"),
    (BASE.replace("  tp: 1", "  tp: 8"), r"r\.yaml:\d+: parallelism\.tp: tp 8 x pp 1 = 8 GPUs, more than"),
    (BASE.replace("  args:\n    mem", "  env:\n    A: \"x\\0y\"\n  args:\n    mem"), r"server\.env\.A: .*NUL"),
    (BASE.replace("  args:\n    mem", "  env:\n    A=B: x\n  args:\n    mem"), r"'A=B' is not an environment"),
    (BASE.replace("sim_profile: demo", "sim_profile: demo\nsim_args:\n  sim-bogus: 1"),
     r"r\.yaml:\d+: sim_args: unrecognized arguments: --sim-bogus 1"),
    (BASE.replace("sim_profile: demo", "sim_profile: demo\nsim_args:\n  sim-error-rate: 2"), r"sim_args: .*fraction"),
    (BASE.replace("gpu: sim", "gpu: \"sim\\n" + "x" * 30_000 + "\""), r"r\.yaml:\d+: hardware\.gpu: String should"),
    (BASE.replace("gpu: sim", "gpu: sim\n  ? \"" + "k\\n" * 15_000 + "\"\n  : 1"), r"r\.yaml:\d+: hardware\.'k\\nk"),
])
def test_bad_recipes(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str | bytes, expected: str) -> None:
    line = one_error_line(*run(capsys, "plan", recipe(tmp_path, text)))
    assert re.search(expected, line), line


def test_a_directory_where_a_recipe_is_expected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("plan", "check", "run", "diff"):
        argv = [command, str(tmp_path)] + ([str(tmp_path)] if command == "diff" else [])
        argv += ["--point", "c2"] if command == "run" else []
        line = one_error_line(*run(capsys, *argv))
        assert line == f"error: {tmp_path}: is a directory; expected a recipe file", (command, line)


def test_set_values_beyond_bounds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = recipe(tmp_path, BASE)
    line = one_error_line(*run(capsys, "plan", path, "--set", "client.seed=" + "9" * 5000))
    assert "client.seed=" in line and "an integer of 5000 digits (at most 30)" in line
    line = one_error_line(*run(capsys, "plan", path, "--set", "env.BAD NAME=1"))
    assert "is not an environment variable name" in line
    line = one_error_line(*run(capsys, "plan", path, "--set", "env.X=a\0b"))
    assert "NUL" in line
    line = one_error_line(*run(capsys, "plan", path, "--set", "nope" + "x\n" * 100_000 + "=1"))
    assert line.startswith("error: --set 'nopex\\nx")


def test_golden_duplicate_keys_are_refused(tmp_path: Path) -> None:
    from harness.errors import UserError
    from harness.recipe import golden

    (tmp_path / "dup.yaml").write_text("m:\n  thinking_on:\n    3: 4.05\n    3: 3.00\n")
    golden._load_curve.cache_clear()
    with pytest.raises(UserError, match=r"dup\.yaml:3: m\.thinking_on\.3: given twice \(again on line 4\)"):
        golden.load_curve("dup", tmp_path)


@pytest.mark.parametrize(("body", "expected"), [
    ('{"id": "t", "models": [], "block_size": 16, "hash_id_scope": "local", "requests": []}',
     r"requests: List should have at least 1 item"),
    ('{"id": "t", "models": [], "block_size": 16, "hash_id_scope": "local", "requests": '
     '[{"type": "n", "t": Infinity, "model": "m", "in": 1, "out": 1}]}', r"invalid JSON: Infinity is not a JSON"),
    ('{"id": "t", "models": [], "block_size": 16, "hash_id_scope": "local", "requests": '
     '[{"type": "n", "t": 1e999, "model": "m", "in": 1, "out": 1}]}', r"finite number"),
    ("[" * 100_000 + "]" * 100_000, r"invalid JSON: nested too deeply"),
    ('{"a": ' + "9" * 5000 + "}", r"invalid JSON: Exceeds the limit"),
])
def test_bad_traces(tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str, expected: str) -> None:
    (tmp_path / "t.json").write_text(body)
    line = one_error_line(*run(capsys, "traces", "validate", str(tmp_path / "t.json")))
    assert re.search(expected, line), line
    (tmp_path / "b.jsonl").write_bytes(b'{"id": 1}\n\xff\n')
    line = one_error_line(*run(capsys, "traces", "validate", str(tmp_path / "b.jsonl")))
    assert "b.jsonl:1" in line or "b.jsonl:2: not UTF-8" in line, line


@pytest.mark.parametrize(("data", "expected"), [
    (b"", "<root>: no entries"),
    (b"\xff\n", "not UTF-8"),
    (b"- a: &x [*x]\n", "an alias refers to the value that contains it"),
])
def test_changelog_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes,
                                 expected: str) -> None:
    path = tmp_path / "perf-changelog.yaml"
    path.write_bytes(data)
    code, err = run(capsys, "changelog", "validate", str(path))
    assert code == 2 and expected in err and "Traceback" not in err, err
    line = one_error_line(*run(capsys, "changelog", "validate", str(tmp_path)))
    assert "is a directory" in line


@pytest.mark.parametrize(("change", "expected"), [
    ("time_limit: \"99:99:99\"", r"c\.yaml:\d+: time_limit: '99:99:99': .*below 60"),
    ("gpus_per_node: " + "9" * 5000, r"c\.yaml:\d+: not valid YAML: an integer of 5000 digits"),
    ("gpus_per_node: &x [*x]", r"an alias refers to the value that contains it"),
])
def test_bad_cluster_profiles(tmp_path: Path, change: str, expected: str) -> None:
    from harness.errors import UserError
    from slurm.profile import load_profile

    text = (ROOT / "clusters" / "local-ci.yaml").read_text()
    key = change.split(":")[0]
    lines = [ln for ln in text.splitlines() if not ln.startswith(key + ":")]
    (tmp_path / "c.yaml").write_text("\n".join([*lines, change]) + "\n")
    with pytest.raises(UserError, match=expected):
        load_profile(tmp_path / "c.yaml")
    with pytest.raises(UserError, match="is a directory"):
        load_profile(tmp_path)


def test_json_dumps_of_a_trace_is_unchanged() -> None:  # the strict JSON reader still reads what we write
    from harness.traces.files import _parse_json

    assert _parse_json(json.dumps({"a": [1.5, 2]}), "x") == {"a": [1.5, 2]}

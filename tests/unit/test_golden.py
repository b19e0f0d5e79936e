"""Golden acceptance-length curves: shipped values, file validation, lookups that never guess."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.errors import UserError
from harness.recipe import golden

MUSE = "muse-spark-open-816b-a42b-nvfp4"
QWEN = "qwen3.5-397b-a17b-nvfp4"


def test_shipped_curves_are_listed() -> None:
    assert {"musespark_dflash", "qwen3.5_mtp"} <= set(golden.list_curves())


@pytest.mark.parametrize(
    ("curve", "model", "thinking", "k", "al"),
    [
        ("musespark_dflash", MUSE, "thinking_on", 7, 4.05),
        ("qwen3.5_mtp", QWEN, "thinking_on", 1, 1.93),
        ("qwen3.5_mtp", QWEN, "thinking_on", 2, 2.73),
        ("qwen3.5_mtp", QWEN, "thinking_on", 3, 3.39),
        ("qwen3.5_mtp", QWEN, "thinking_on", 4, 3.97),
        ("qwen3.5_mtp", QWEN, "thinking_off", 1, 1.92),
        ("qwen3.5_mtp", QWEN, "thinking_off", 2, 2.70),
        ("qwen3.5_mtp", QWEN, "thinking_off", 3, 3.33),
        ("qwen3.5_mtp", QWEN, "thinking_off", 4, 3.83),
    ],
)
def test_shipped_values(curve: str, model: str, thinking: str, k: int, al: float) -> None:
    assert golden.lookup(curve, model, thinking, k) == al


def test_shipped_curves_hold_exactly_the_known_cells() -> None:
    muse = golden.load_curve("musespark_dflash")
    assert list(muse.models) == [MUSE]
    assert muse.models[MUSE].thinking_on == {7: 4.05}
    assert muse.models[MUSE].thinking_off is None
    qwen = golden.load_curve("qwen3.5_mtp")
    assert qwen.models[QWEN].thinking_on == {1: 1.93, 2: 2.73, 3: 3.39, 4: 3.97}
    assert qwen.models[QWEN].thinking_off == {1: 1.92, 2: 2.70, 3: 3.33, 4: 3.83}


def test_shipped_files_carry_a_provenance_header() -> None:
    for name in golden.list_curves():
        text = (golden.golden_dir() / f"{name}.yaml").read_text()
        assert text.startswith("#") and "Provenance" in text


def test_unknown_curve() -> None:
    with pytest.raises(UserError, match=r"^unknown golden curve 'nope' \(known: musespark_dflash, qwen3.5_mtp"):
        golden.lookup("nope", MUSE, "thinking_on", 7)


def test_curve_name_cannot_escape_the_directory() -> None:
    with pytest.raises(UserError, match="unknown golden curve '../qwen3.5_mtp'"):
        golden.load_curve("../qwen3.5_mtp")


def test_unknown_model() -> None:
    with pytest.raises(UserError) as exc:
        golden.lookup("musespark_dflash", "muse-spark", "thinking_on", 7)
    assert str(exc.value) == f"golden curve musespark_dflash: no model 'muse-spark' (known: {MUSE})"


def test_unknown_thinking_mode() -> None:
    with pytest.raises(UserError) as exc:
        golden.lookup("qwen3.5_mtp", QWEN, "thinking", 1)
    assert str(exc.value) == (
        "golden curve qwen3.5_mtp: thinking mode must be one of thinking_on, thinking_off, got 'thinking'"
    )


def test_missing_thinking_mode_is_not_borrowed_from_the_other() -> None:
    with pytest.raises(UserError) as exc:
        golden.lookup("musespark_dflash", MUSE, "thinking_off", 7)
    assert str(exc.value) == (
        f"golden curve musespark_dflash: {MUSE} has no thinking_off values (known: thinking_on)"
    )


@pytest.mark.parametrize("k", [6, 8, 0])
def test_unknown_k_is_never_interpolated(k: int) -> None:
    with pytest.raises(UserError) as exc:
        golden.lookup("musespark_dflash", MUSE, "thinking_on", k)
    assert str(exc.value) == (
        f"golden curve musespark_dflash: no golden AL for {MUSE}/thinking_on/k={k} (known k: 7); "
        "golden values are never interpolated"
    )


def test_boolean_k_is_rejected() -> None:
    with pytest.raises(UserError, match="draft length k must be an integer, got True"):
        golden.lookup("qwen3.5_mtp", QWEN, "thinking_on", True)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    (tmp_path / f"{name}.yaml").write_text(text)
    return tmp_path


def test_custom_directory(tmp_path: Path) -> None:
    root = _write(tmp_path, "toy_mtp", "toy: {thinking_off: {2: 2.5, 1: 1.75}}\n")
    assert golden.list_curves(root) == ["toy_mtp"]
    curve = golden.load_curve("toy_mtp", root)
    assert curve.models["toy"].thinking_off == {1: 1.75, 2: 2.5}
    assert golden.lookup("toy_mtp", "toy", "thinking_off", 2, root) == 2.5


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("m: {thinking_on: {2: 3.5}}", "m.thinking_on: k=2: AL 3.5 is outside [1, k+1] = [1, 3]"),
        ("m: {thinking_on: {2: 0.5}}", "m.thinking_on: k=2: AL 0.5 is outside [1, k+1] = [1, 3]"),
        ("m: {thinking_on: {2: 2.555}}", "m.thinking_on: k=2: AL 2.555 has more than two decimals"),
        ("m: {thinking_on: {2: '2.5'}}", "m.thinking_on.2: Input should be a valid number"),
        ("m: {thinking_on: {2: true}}", "m.thinking_on.2: Input should be a valid number"),
        ("m: {thinking_on: {'2': 2.5}}", "m.thinking_on.2.[key]: Input should be a valid integer"),
        ("m: {thinking_on: {0: 1.0}}", "m.thinking_on.0.[key]: Input should be greater than or equal to 1"),
        ("m: {thinking_on: {}}", "m.thinking_on: expected at least one `k: AL` entry"),
        ("m: {thinking: {1: 1.5}}", "m.thinking: Extra inputs are not permitted"),
        ("m: {}", "m: expected thinking_on and/or thinking_off"),
        ("[1, 2]", "<root>: expected a mapping"),
    ],
)
def test_invalid_curve_files(tmp_path: Path, body: str, message: str) -> None:
    root = _write(tmp_path, "bad", body + "\n")
    golden._load_curve.cache_clear()
    with pytest.raises(UserError) as exc:
        golden.load_curve("bad", root)
    assert re.match(re.escape(f"{root / 'bad.yaml'}") + r"(:\d+)?: " + re.escape(message), str(exc.value))


def test_unparsable_yaml_names_the_line(tmp_path: Path) -> None:
    root = _write(tmp_path, "broken", "m:\n  thinking_on: {1: 1.5\n")
    with pytest.raises(UserError, match=r"broken.yaml:3: not valid YAML"):
        golden.load_curve("broken", root)

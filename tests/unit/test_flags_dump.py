"""`harness flags dump`: a flag table built from SGLang's own argparse parser."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path

import pytest

from harness.cli import main as cli_main
from harness.recipe.server_flags import flag_dump, flags


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(add_help=True)
    parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1)
    parser.add_argument("--cuda-graph-max-bs-decode", type=int, default=None)
    parser.add_argument("--cuda-graph-max-bs-prefill", type=int, default=None)
    parser.add_argument("--hicache-write-policy", type=str, default="write_through",
                        choices=["write_back", "write_through"])
    parser.add_argument("--enable-metrics", action="store_true")
    parser.add_argument("--enable-tf32-matmul", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument("--cuda-graph-bs-decode", type=int, nargs="+", default=(1, 2))
    parser.add_argument("--extra", type=json.loads, default=None)
    return parser


def test_table_from_parser_records_every_option() -> None:
    doc = flag_dump.table_from_parser(_parser(), "9.9.9")
    assert doc["sglang_version"] == "9.9.9"
    assert doc["source"] == "argparse parser of sglang.srt.server_args.ServerArgs.add_cli_args, sglang 9.9.9"
    assert list(doc["options"]) == sorted(doc["options"])  # help left out, sorted by dest
    assert "help" not in doc["options"]
    assert doc["options"]["tp_size"] == {
        "action": "_StoreAction", "choices": None, "const": None, "default": 1,
        "flags": ["--tp-size", "--tensor-parallel-size"], "nargs": None, "type": "int",
    }
    assert doc["options"]["enable_metrics"]["action"] == "_StoreTrueAction"
    assert doc["options"]["enable_tf32_matmul"]["flags"] == ["--enable-tf32-matmul", "--no-enable-tf32-matmul"]
    assert doc["options"]["cuda_graph_bs_decode"]["default"] == [1, 2]  # tuples become JSON lists
    assert doc["options"]["extra"]["type"] == "loads"
    json.dumps(doc)  # the document is plain JSON


def test_dumped_table_drives_validation() -> None:
    table = flags.table_from_dict(json.loads(json.dumps(flag_dump.table_from_parser(_parser(), "9.9.9"))), "t.json")
    assert flags.render_argv(table, {"--tp": "2", "--no-enable-tf32-matmul": True, "--enable-metrics": True}) == [
        "--tp-size", "2", "--no-enable-tf32-matmul", "--enable-metrics"
    ]
    with pytest.raises(Exception, match="ambiguous in SGLang 9.9.9"):
        table.resolve("--cuda-graph-max-bs")


def test_shipped_tables_have_the_dump_shape() -> None:
    for version in flags.available_versions():
        doc = json.loads((flags.tables_dir() / f"{version}.json").read_text())
        assert doc["sglang_version"] == version
        for entry in doc["options"].values():
            assert set(entry) == {"action", "choices", "const", "default", "flags", "nargs", "type"}


def test_malformed_table_is_one_line() -> None:
    with pytest.raises(Exception, match=r"^t.json: options.x.flags: Field required$"):
        flags.table_from_dict(
            {"sglang_version": "1", "source": "s",
             "options": {"x": {"action": "a", "type": None, "nargs": None, "choices": None, "default": None}}},
            "t.json",
        )


def test_dump_without_sglang_fails_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "sglang", None)  # makes `import sglang…` raise ImportError
    assert cli_main(["flags", "dump"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("error: cannot import sglang.srt.server_args (")
    assert err.endswith("run `harness flags dump` inside the pinned SGLang engine image, where sglang is installed\n")


def test_dump_from_an_installed_sglang(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pkg = tmp_path / "site" / "sglang"
    (pkg / "srt").mkdir(parents=True)
    (pkg / "__init__.py").write_text('__version__ = "0.0.1"\n')
    (pkg / "srt" / "__init__.py").write_text("")
    (pkg / "srt" / "server_args.py").write_text(textwrap.dedent("""
        class ServerArgs:
            @staticmethod
            def add_cli_args(parser):
                parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1)
                parser.add_argument("--enable-metrics", action="store_true")
    """))
    for name in ("sglang", "sglang.srt", "sglang.srt.server_args"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    out = tmp_path / "0.0.1.json"
    try:
        assert cli_main(["flags", "dump", "--out", str(out)]) == 0
        assert capsys.readouterr().out == f"wrote {out} (2 options, sglang 0.0.1)\n"
        doc = json.loads(out.read_text())
        assert doc["schema_version"] == 1
        table = flags.load_table("0.0.1", tmp_path)
        assert [f.name for f in table.flags] == ["--enable-metrics", "--tp-size"]
        assert cli_main(["flags", "dump"]) == 0
        assert json.loads(capsys.readouterr().out)["options"] == doc["options"]
    finally:
        for name in ("sglang", "sglang.srt", "sglang.srt.server_args"):
            sys.modules.pop(name, None)

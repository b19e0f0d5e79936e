"""The command line reads no abbreviation of an option: a prefix of an option is an error naming the option it
resembles, and a setting given as two tokens is answered with the one-token form. `harness sim` alone reads
SGLang's flags as SGLang does."""

from __future__ import annotations

import argparse

import pytest

from harness.cli import SUBCOMMANDS, _build_parser, main


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def _parsers(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, argparse.ArgumentParser]]:
    out = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                out += _parsers(child, f"{path} {name}")
    return out


@pytest.mark.parametrize("command", [name for name in SUBCOMMANDS if name != "sim"])
def test_no_parser_reads_abbreviations(command: str) -> None:
    parser, _ = _build_parser([command])
    found = [path for path, p in _parsers(parser, "harness") if p.allow_abbrev and not path.endswith(" sim")]
    assert found == []


def test_a_prefix_of_an_option_is_an_error_naming_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(["sweep", "r.yaml", "--point", "c2"], capsys)
    assert "unrecognized arguments: --point c2; --point: did you mean '--points'" in err
    err = _usage_error(["report", "runs", "--no-rec"], capsys)
    assert "--no-rec: did you mean '--no-records'?" in err


def test_a_setting_in_two_tokens_is_answered_with_the_one_token_form(capsys: pytest.CaptureFixture[str]) -> None:
    err = _usage_error(["sweep", "r.yaml", "--set", "engine", "sim"], capsys)
    assert err.rstrip().endswith("; --set takes one SETTING=VALUE argument; write --set engine=sim")
    err = _usage_error(["plan", "--set", "args.max-running-requests", "64", "r.yaml"], capsys)
    assert "--set args.max-running-requests=64" in err


def test_the_job_summary_tool_reads_no_abbreviation(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.report.render.job_summary import main as job_summary

    with pytest.raises(SystemExit) as exit_info:
        job_summary(["report", "report.md", "--art", "a"])
    assert exit_info.value.code == 2 and "unrecognized arguments: --art" in capsys.readouterr().err

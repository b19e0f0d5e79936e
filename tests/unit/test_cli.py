"""The command line: lazy dispatch, one-line user errors, version, help."""

import subprocess
import sys

from harness.cli import SUBCOMMANDS, main


def test_every_subcommand_module_has_the_two_functions():
    import importlib

    for name, (module_name, _) in SUBCOMMANDS.items():
        module = importlib.import_module(module_name)
        assert callable(module.add_arguments) and callable(module.main), name


def test_user_error_is_one_line_and_exit_2(capsys):
    assert main(["run", "no-such-recipe.yaml", "--point", "c1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: no-such-recipe.yaml: no such recipe file"]


def test_version_and_help_do_not_import_heavy_modules():
    code = ("import sys; from harness.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('aiperf', 'matplotlib', 'numpy', 'pydantic') if m in sys.modules]\n"
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"
    version = subprocess.run([sys.executable, "-m", "harness", "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("harness ")


def _usage_error(argv: list[str], capsys) -> str:
    import pytest

    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def test_a_misspelt_subcommand_names_the_closest(capsys):
    err = _usage_error(["swep"], capsys)
    assert "usage: harness" in err and err.rstrip().endswith("; did you mean 'sweep'?")
    assert "did you mean" not in _usage_error(["zzzzzz"], capsys)


def test_a_misspelt_option_names_the_closest_even_when_an_argument_is_missing(capsys):
    err = _usage_error(["run", "--duraton", "5"], capsys)
    assert "the following arguments are required: --point; --duraton: did you mean '--duration'?" in err
    err = _usage_error(["run", "r.yaml", "--point", "c1", "--duraton", "5"], capsys)
    assert "unrecognized arguments: --duraton 5; --duraton: did you mean '--duration'?" in err
    err = _usage_error(["compare", "a", "b", "--jsn"], capsys)
    assert "--jsn: did you mean '--json'" in err   # (or '--slo', as close)


def test_a_misspelt_nested_choice_names_the_closest(capsys):
    err = _usage_error(["traces", "synt"], capsys)
    assert err.rstrip().endswith("did you mean 'synth'?")
    err = _usage_error(["run", "r.yaml", "--point", "c1", "--launcher", "dockr"], capsys)
    assert err.rstrip().endswith("did you mean 'docker'?")

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

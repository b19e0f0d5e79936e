"""An SGLang flag written as a unique prefix (in a recipe or a `--set`) is read as the flag it selects, as SGLang's
argparse reads it, and a warning names the full flag; full spellings and aliases pass without a word."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.recipe.load import abbreviated_flags
from harness.recipe.server_flags.flags import load_table

RECIPE = Path(__file__).parents[2] / "recipes" / "quickstart-sim.yaml"

TEXT = """\
server:
  args:
    mem-fraction: 0.85
    max-running-requests: 32
    model: m
points:
  c8:
    args:
      chunked-prefill: 4096
"""


def test_the_table_names_the_flag_a_prefix_selects() -> None:
    table = load_table("0.5.23")
    assert table.abbreviated("max-running-request") == "--max-running-requests"
    assert table.abbreviated("--max-running-requests") is None       # a spelling of its own
    assert table.abbreviated("model") is None                         # an alias of --model-path
    assert table.abbreviated("tp") == "--tp-size"
    assert table.abbreviated("cuda-graph-max-bs") is None             # ambiguous: SGLang refuses it
    assert table.abbreviated("no-such-flag") is None


def test_each_abbreviated_flag_of_a_recipe_and_its_overrides_is_named() -> None:
    lines = abbreviated_flags(TEXT, "r.yaml", ["args.max-running-request=8", "server.args.stream-int=2",
                                               "args.stream-interval=1", "client.duration_s=30"], "0.5.23")
    assert lines == [
        "r.yaml: server.args.mem-fraction: --mem-fraction is read as --mem-fraction-static, as SGLang reads a "
        "unique prefix; write --mem-fraction-static",
        "r.yaml: points.c8.args.chunked-prefill: --chunked-prefill is read as --chunked-prefill-size, as SGLang "
        "reads a unique prefix; write --chunked-prefill-size",
        "--set args.max-running-request: --max-running-request is read as --max-running-requests, as SGLang reads "
        "a unique prefix; write --max-running-requests",
        "--set server.args.stream-int: --stream-int is read as --stream-interval, as SGLang reads a unique prefix; "
        "write --stream-interval",
    ]


def test_plan_warns_of_an_abbreviated_flag_and_plans_the_full_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(RECIPE), "--point", "c2", "--set", "args.max-running-request=8"]) == 0
    out, err = capsys.readouterr()
    assert ("warning: --set args.max-running-request: --max-running-request is read as --max-running-requests"
            in err)
    assert "--max-running-requests 8" in out


def test_submit_warns_of_an_abbreviated_flag_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = RECIPE.parents[1] / "clusters" / "local-ci.yaml"
    assert main(["submit", str(RECIPE), "--cluster", str(profile), "--dry-run", "--no-preflight", "--points", "c2",
                 "--set", "args.max-running-request=8", "--out", str(tmp_path / "out")]) == 0
    assert ("warning: --set args.max-running-request: --max-running-request is read as --max-running-requests"
            in capsys.readouterr().err)
    plan = next((tmp_path / "out" / "slurm").glob("plan-*.json")).read_text()
    assert '"max-running-requests"' in plan or "--max-running-requests" in plan

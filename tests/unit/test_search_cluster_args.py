"""`harness search --cluster`: what only a local search takes, and a recipe the cluster cannot run, refused in one
line before anything is submitted."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "recipes" / "quickstart-sim.yaml")
LOCAL_CI = ROOT / "clusters" / "local-ci.yaml"


def search(tmp_path: Path, *args: str) -> int:
    return main(["search", "--slo", "ttft_p90<=1", "--out", str(tmp_path / "runs"), *args])


@pytest.mark.parametrize(("extra", "flag"), [(["--launcher", "docker"], "--launcher"),
                                             (["--mount", "/a:/b"], "--mount"),
                                             (["--image-path", "x.sqsh"], "--image-path")])
def test_local_only_options_are_refused_with_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                     extra: list[str], flag: str) -> None:
    assert search(tmp_path, QUICKSTART, "--cluster", str(LOCAL_CI), *extra) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{flag}: not with --cluster" in err
    assert not (tmp_path / "runs").exists()


def test_round_size_needs_a_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert search(tmp_path, QUICKSTART, "--round-size", "2") == 2
    assert "--round-size: only with --cluster" in capsys.readouterr().err


def test_a_simulator_recipe_on_a_runtime_without_the_simulator_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = tmp_path / "enroot.yaml"
    profile.write_text(LOCAL_CI.read_text().replace("runtime: pyxis", "runtime: enroot"))
    assert search(tmp_path, QUICKSTART, "--cluster", str(profile)) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "engine sim cannot run with container.runtime enroot" in err, err
    assert not (tmp_path / "runs").exists()


def test_a_recipe_for_other_gpus_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = str(ROOT / "recipes" / "musespark-fp4-h200-sglang-agentic-dflash.yaml")
    assert search(tmp_path, recipe, "--cluster", str(LOCAL_CI)) == 2
    err = capsys.readouterr().err.strip()
    assert "hardware.gpu: recipe is for 'h200' but cluster 'local-ci' has 'sim'" in err, err

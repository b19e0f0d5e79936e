"""Preflight's container checks: mount roots, the squash file's path form, and the probe steps' findings (the
probe's srun answered by a stand-in that prints what a node and a container would)."""

from __future__ import annotations

import subprocess
from types import SimpleNamespace
from typing import Any

from harness.preflight import container

NODE = 'ROOT 2049:2\nPRETTY_NAME="Rocky Linux 9.4 (Blue Onyx)"\n'
IMAGE = 'ROOT 51:1337\nPRETTY_NAME="Ubuntu 24.04.1 LTS"\n'


def profile(mounts: tuple[str, ...] = (), roots: tuple[str, ...] = (), runtime: str = "pyxis") -> Any:
    return SimpleNamespace(container=SimpleNamespace(runtime=runtime, mount_roots=list(roots)),
                           default_mounts=list(mounts), partition="gpu", account="SITE-acct", qos=None)


def test_a_mount_outside_the_allowed_roots_fails_and_inside_passes() -> None:
    bad = container.static(profile(("/lustre/models:/models", "/home/me/cache:/cache"), ("/lustre", "/scratch")),
                           None, "c.yaml")
    assert [(f.level, f.code) for f in bad] == [("fail", "mount_root")]
    assert "/home/me/cache lies outside container.mount_roots (/lustre, /scratch)" in bad[0].message
    good = container.static(profile(("/lustre/models:/models", "/scratch:/s"), ("/lustre", "/scratch")), None, "c")
    assert [(f.level, f.code) for f in good] == [("pass", "mount_root")]
    assert container.static(profile(("/anywhere:/a",)), None, "c") == []   # no roots: not checked


def test_pyxis_takes_a_squash_file_only_by_an_absolute_or_dot_slash_path() -> None:
    assert container.static(profile(), "/images/x86_64/sglang.sqsh", "c") == []
    assert container.static(profile(), "./sglang.sqsh", "c") == []
    bad = container.static(profile(), "images/sglang.sqsh", "c")
    assert [(f.level, f.code) for f in bad] == [("fail", "image_path")]


class Srun:
    """Answers the probe's two steps: the node's (no --container-image) and the container's."""

    def __init__(self, node: str, boxed: str, boxed_rc: int = 0, boxed_err: str = "") -> None:
        self.node, self.boxed, self.boxed_rc, self.boxed_err = node, boxed, boxed_rc, boxed_err
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str]) -> subprocess.CompletedProcess[str]:
        self.calls.append(argv)
        if any(a.startswith("--container-image=") for a in argv):
            return subprocess.CompletedProcess(argv, self.boxed_rc, self.boxed, self.boxed_err)
        return subprocess.CompletedProcess(argv, 0, self.node, "")


def test_a_container_step_shows_the_images_os() -> None:
    srun = Srun(NODE + "READABLE /img/s.sqsh\nREADABLE /lustre/m\n", IMAGE)
    found = container.probe(profile(("/lustre/m:/m",)), "lmsysorg/sglang:v0.5.23", "/img/s.sqsh", "c.yaml", srun)
    assert [(f.level, f.code) for f in found] == [("pass", "image_readable"), ("pass", "container_image")]
    assert found[-1].message == "the step ran in /img/s.sqsh: Ubuntu 24.04.1 LTS (the node: Rocky Linux 9.4 (Blue Onyx))"
    boxed = srun.calls[1]
    assert "--container-image=/img/s.sqsh" in boxed and "--container-mounts=/lustre/m:/m" in boxed
    assert "--partition=gpu" in boxed and not any(a.startswith("--account") for a in boxed)   # a SITE placeholder


def test_an_ignored_container_image_is_caught_by_the_root_the_step_saw() -> None:
    found = container.probe(profile(), "lmsysorg/sglang:v0.5.23", None, "c.yaml", Srun(NODE, NODE))
    assert [(f.level, f.code) for f in found] == [("fail", "container_image")]
    assert "--container-image was ignored" in found[0].message and "Rocky Linux 9.4" in found[0].message


def test_srun_without_pyxis_and_unreadable_files_are_named() -> None:
    srun = Srun(NODE + "UNREADABLE /img/s.sqsh\nUNREADABLE /gone\n", "", 1,
                "srun: unrecognized option '--container-image=/img/s.sqsh'\n")
    found = container.probe(profile(("/gone:/data",)), "img", "/img/s.sqsh", "c.yaml", srun)
    assert [(f.level, f.code) for f in found] == [("fail", "image_readable"), ("fail", "mount_source"),
                                                  ("fail", "container_image")]
    assert "pyxis is not loaded here" in found[-1].message and "/gone does not exist" in found[1].message


def test_a_failed_container_step_quotes_the_plugins_words_not_slurms_trailers() -> None:
    err = ("slurmstepd-n1: error: fake-pyxis: mount source does not exist: /gone\n"
           "slurmstepd-n1: error: spank: required plugin fake_pyxis.so: task_init() failed with rc=-1\n"
           "slurmstepd-n1: error: Failed to invoke spank plugin stack\n"
           "srun: error: n1: task 0: Exited with exit code 1\n")
    found = container.probe(profile(("/gone:/data",)), "img", None, "c.yaml", Srun(NODE, "", 1, err))
    assert found[-1].message == ("the probe step in img failed: slurmstepd-n1: error: fake-pyxis: mount source does "
                                 "not exist: /gone")
    only_trailers = err.split("\n", 1)[1]
    found = container.probe(profile(), "img", None, "c.yaml", Srun(NODE, "", 1, only_trailers))
    assert "Failed to invoke spank plugin stack | srun: error: n1: task 0" in found[-1].message
    assert container.probe(profile(), "img", None, "c.yaml", Srun(NODE, "", 7))[-1].message.endswith("srun exited 7")

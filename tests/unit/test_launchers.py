"""Golden argv per launcher kind: the exact command each launcher runs."""

import sys
from pathlib import Path

import pytest

from harness.errors import UserError
from launchers import LaunchContext, get_launcher, launcher_kinds

SERVER = ["python3", "-m", "sglang.launch_server", "--model-path", "/models/m", "--tp-size", "4",
          "--host", "0.0.0.0", "--port", "30000"]
ENV = {"SGLANG_SIMULATE_ACC_LEN": "4.05", "A_B": "x y"}


def ctx(**kw):
    base = dict(point_dir=Path("/tmp/p"), image="lmsysorg/sglang:v0.5.23", engine="sglang",
                mounts=("/models:/models", "/cache:/root/.cache"), gpus=("4", "5", "6", "7"),
                container_name="harness-c4")
    base.update(kw)
    return LaunchContext(**base)


def test_all_kinds_present():
    assert launcher_kinds() == ["local", "docker", "enroot", "pyxis", "apptainer"]


def test_local_runs_the_command_as_is():
    assert get_launcher("local").render(SERVER, ENV, ctx()) == SERVER


def test_local_runs_the_simulator_with_this_interpreter():
    sim = ["python3", "-m", "harness.sim", "--port", "1"]
    assert get_launcher("local").render(sim, {}, ctx(engine="sim")) == [sys.executable, "-m", "harness.sim",
                                                                           "--port", "1"]


def test_docker():
    assert get_launcher("docker").render(SERVER, ENV, ctx(mounts=("/models:/models:ro", "/cache:/root/.cache"))) == [
        "docker", "run", "--rm", "--name", "harness-c4", "--label", "io.harness.point=/tmp/p",
        "--gpus", '"device=4,5,6,7"', "--network", "host",
        "--ipc", "host", "--shm-size", "32g", "--ulimit", "memlock=-1", "--ulimit", "nofile=65536:65536",
        "--mount", "type=bind,source=/tmp/p,target=/tmp/p",
        "--mount", "type=bind,source=/models,target=/models,readonly",
        "--mount", "type=bind,source=/cache,target=/root/.cache",
        "-e", "A_B", "-e", "SGLANG_SIMULATE_ACC_LEN=4.05",   # A_B: off the allow-list, by name
        "lmsysorg/sglang:v0.5.23", *SERVER]
    assert get_launcher("docker").teardown(ctx()) == ["docker", "rm", "-f", "harness-c4"]


def test_docker_runs_the_simulator_without_gpus():
    sim = ["python3", "-m", "harness.sim", "--port", "1"]
    argv = get_launcher("docker").render(sim, {}, ctx(engine="sim", image="harness-sim:local"))
    assert "--gpus" not in argv and argv[-6:] == ["harness-sim:local", *sim]


def test_docker_mount_paths_with_commas_are_quoted_for_dockers_csv() -> None:
    argv = get_launcher("docker").render(SERVER, {}, ctx(point_dir=Path("/runs/a=b,c=d/conc2"), mounts=()))
    assert argv[argv.index("--mount") + 1] == 'type=bind,"source=/runs/a=b,c=d/conc2","target=/runs/a=b,c=d/conc2"'


def test_docker_container_name_is_one_per_launch_of_a_point_directory(tmp_path: Path) -> None:
    from launchers.docker import container_name

    a = container_name("quickstart-sim", 2, tmp_path / "runs" / "conc2", "0a1b2c")
    assert a == container_name("quickstart-sim", 2, tmp_path / "runs" / "x" / ".." / "conc2", "0a1b2c")
    assert a != container_name("quickstart-sim", 2, tmp_path / "runs" / "conc2", "3d4e5f")   # another launch
    assert a != container_name("quickstart-sim", 2, tmp_path / "other" / "conc2", "0a1b2c")   # another output dir
    assert a.startswith("harness-quickstart-sim-c2-") and a.endswith("-0a1b2c")
    assert container_name("a b/c:d", 8, tmp_path, "0a1b2c").startswith("harness-a-b-c-d-c8-")   # docker's characters


@pytest.mark.parametrize(("log", "code", "words"), [
    ("Unable to find image 'nosuch:1' locally\ndocker: Error response from daemon: Get "
     "\"https://registry-1.docker.io/v2/\": dial tcp: no such host\n", "image_unavailable", "Unable to find image"),
    ("docker: Error response from daemon: invalid mount config for type \"bind\": bind source path does not exist: "
     "/nope\n", "mount_missing", "bind source path does not exist: /nope"),
    ("docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]]\n",
     "gpu_runtime_missing", "could not select device driver"),
    ("docker: Error response from daemon: Conflict. The container name is already in use\n",
     "container_start_failed", "Conflict."),
])
def test_docker_refusals_are_named_in_dockers_own_words(log: str, code: str, words: str) -> None:
    from launchers.docker import start_failure

    got = start_failure("[harness] starting\n" + log)
    assert got is not None and got[0] == code and words in got[1]


def test_a_server_log_without_dockers_words_is_no_refusal() -> None:
    from launchers.docker import start_failure

    assert start_failure("OSError: [Errno 98] address already in use\n") is None


def test_docker_all_gpus():
    argv = get_launcher("docker").render(SERVER, {}, ctx(gpus=None))
    assert argv[argv.index("--gpus") + 1] == "all"


def test_enroot():
    assert get_launcher("enroot").render(SERVER, ENV, ctx(image_path="/cache/sglang.sqsh")) == [
        "enroot", "start", "--rw", "--mount", "/models:/models", "--mount", "/cache:/root/.cache",
        "--env", "A_B", "--env", "SGLANG_SIMULATE_ACC_LEN=4.05", "/cache/sglang.sqsh", *SERVER]


def test_pyxis():
    assert get_launcher("pyxis").render(SERVER, ENV, ctx()) == [
        "srun", "--overlap", "--nodes=1", "--ntasks=1", "--job-name=harness-c4", "--export=ALL",
        "--container-image=lmsysorg/sglang:v0.5.23", "--container-mounts=/models:/models,/cache:/root/.cache",
        "--container-env=A_B,CUDA_VISIBLE_DEVICES,PYTHONUNBUFFERED,SGLANG_SIMULATE_ACC_LEN",
        "--no-container-mount-home", "--container-remap-root", "--no-container-entrypoint", *SERVER]


def test_pyxis_names_every_variable_the_harness_sets_in_container_env() -> None:
    """pyxis keeps an image's value over the exported host value unless --container-env names the variable."""
    env = {"SGLANG_SIMULATE_ACC_LEN": "4.05", "SGLANG_SIMULATE_ACC_METHOD": "match-expected", "NCCL_DEBUG": "INFO",
           "HF_TOKEN": "hf_abcdefgh12345"}
    argv = get_launcher("pyxis").render(SERVER, env, ctx(gpus=None))
    named = next(a for a in argv if a.startswith("--container-env=")).split("=", 1)[1].split(",")
    assert named == ["HF_TOKEN", "NCCL_DEBUG", "PYTHONUNBUFFERED", "SGLANG_SIMULATE_ACC_LEN",
                     "SGLANG_SIMULATE_ACC_METHOD"]
    assert "hf_abcdefgh12345" not in " ".join(argv)   # names only: values travel through --export=ALL


def test_apptainer():
    assert get_launcher("apptainer").render(SERVER, ENV, ctx()) == [
        "apptainer", "exec", "--nv", "--cleanenv", "--bind", "/models:/models", "--bind", "/cache:/root/.cache",
        "--env", "SGLANG_SIMULATE_ACC_LEN=4.05", "docker://lmsysorg/sglang:v0.5.23", *SERVER]


SECRET_ENV = {"HF_TOKEN": "hf_abcdef123", "MY_SETTING": "glrt-neutral0123456789", "NCCL_DEBUG": "INFO"}


@pytest.mark.parametrize("kind,flag", [("docker", "-e"), ("enroot", "--env")])
@pytest.mark.parametrize("name", ["HF_TOKEN", "MY_SETTING"])   # a secret's name, and a neutral one
def test_a_value_off_the_allow_list_is_passed_by_name_and_through_the_environment(kind: str, flag: str,
                                                                                   name: str) -> None:
    launcher = get_launcher(kind)
    argv = launcher.render(SERVER, SECRET_ENV, ctx())
    assert argv[argv.index(name) - 1] == flag and SECRET_ENV[name] not in " ".join(argv)
    assert launcher.process_env(SECRET_ENV, ctx())[name] == SECRET_ENV[name]
    assert argv[argv.index("NCCL_DEBUG=INFO") - 1] == flag                   # on the allow-list: as written


@pytest.mark.parametrize("name", ["HF_TOKEN", "MY_SETTING"])
def test_apptainer_takes_a_value_off_the_allow_list_through_apptainerenv_not_argv(name: str) -> None:
    launcher = get_launcher("apptainer")
    argv = launcher.render(SERVER, SECRET_ENV, ctx())
    assert name not in " ".join(argv) and "NCCL_DEBUG=INFO" in argv
    assert launcher.process_env(SECRET_ENV, ctx())[f"APPTAINERENV_{name}"] == SECRET_ENV[name]


def test_unknown_kind_is_a_user_error():
    with pytest.raises(UserError, match="unknown kind 'kubernetes'"):
        get_launcher("kubernetes")


@pytest.mark.parametrize("kind", ["local", "docker", "enroot", "pyxis", "apptainer"])
@pytest.mark.parametrize(("bind", "probe"), [("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "127.0.0.1"),
                                             ("10.1.2.3", "10.1.2.3")])
def test_rendered_bind_address_and_probed_url_agree(kind: str, bind: str, probe: str) -> None:
    """Every launcher shares the host network: the probe reaches exactly what the rendered --host binds."""
    from harness.point.servers.serve import listen_at

    plan_argv = [*SERVER[:-4], "--host", bind, "--port", "30000"]
    server_argv, url = listen_at(plan_argv, 41234)
    rendered = get_launcher(kind).render(server_argv, ENV, ctx(image_path="/cache/sglang.sqsh"))
    tail = rendered[len(rendered) - len(server_argv):]
    assert tail[tail.index("--host") + 1] == bind and tail[tail.index("--port") + 1] == "41234"
    assert url == f"http://{probe}:41234"
    if kind == "docker":
        assert rendered[rendered.index("--network") + 1] == "host"


def test_the_plan_binds_loopback_and_the_runner_probes_loopback() -> None:
    from harness.point.servers.serve import listen_at
    from harness.recipe.points import load_plans

    root = Path(__file__).resolve().parents[2]
    _, plans = load_plans(root / "recipes" / "musespark-fp4-gb300-sglang-agentic-dflash.yaml", ["c1"])
    argv, url = listen_at(plans[0].server.argv, 5000)
    assert argv[argv.index("--host") + 1] == "127.0.0.1" and url == "http://127.0.0.1:5000"


@pytest.mark.parametrize("kind", ["docker", "enroot", "apptainer"])
def test_container_launchers_refuse_the_simulator_in_one_line(kind, capsys):
    from harness.cli import main as cli_main

    recipe = Path(__file__).resolve().parents[2] / "recipes" / "quickstart-sim.yaml"
    assert cli_main(["run", str(recipe), "--point", "c2", "--launcher", kind]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--launcher {kind} with engine: sim: the simulator ships with the harness" in err


@pytest.mark.parametrize(("image", "inspected", "refused"), [
    ("harness-sim:local", (True, "1"), False),          # a local image holding the harness (tools/sim-image.sh)
    ("my/other:tag", (True, None), True),               # a local image without it
    ("harness-missing:never", (False, None), False),    # not here: docker says so when the point starts
    ("lmsysorg/sglang:v0.5.23", (False, None), True),   # an SGLang image never holds the harness
])
def test_docker_runs_the_simulator_only_in_an_image_that_holds_it(image: str, inspected: tuple[bool, str | None],
                                                                  refused: bool,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from launchers.base import check_engine

    monkeypatch.setattr("launchers.docker.image_label", lambda image, label: inspected)
    if refused:
        with pytest.raises(UserError, match="--launcher docker with engine: sim"):
            check_engine("docker", "sim", image)
    else:
        check_engine("docker", "sim", image)
    check_engine("docker", "sglang", image)   # a real engine is never refused here

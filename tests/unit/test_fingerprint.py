"""Worker fingerprints: srt-slurm's keys and shapes captured by the server's own interpreter through the server's
own launcher, the harness's extras after them, secrets redacted."""

import json
import shutil
import sys
from pathlib import Path

import pytest

from harness.artifacts import command_view, json_text
from harness.point.fingerprints import fingerprint_capture
from harness.point.fingerprints.fingerprint import (
    CAPTURE_SCRIPT,
    FIELD_ORDER,
    build_fingerprint,
    capture_argv,
    capture_in_server_env,
    image_digest,
    parse_capture,
    recorded_capture_argv,
)
from harness.redact import redact_argv, redact_env
from harness.redact_plain import setting_hash
from launchers import LaunchContext, get_launcher

SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", "/models/m", "--host", "0.0.0.0",
          "--port", "30000"]
SIM = ["python3", "-m", "harness.sim", "--model-path", "sim-model", "--port", "30001"]
ENV = {"HF_TOKEN": "hf_secret", "SGLANG_X": "1"}
SRT_SLURM_TYPES = {"hostname": str, "timestamp": str, "arch": str, "os": str, "cpu": dict, "gpu": dict,
                   "python_version": str, "cuda_version": str, "nccl_version": str, "frameworks": dict,
                   "env": dict, "pip_packages": dict}


def ctx(tmp: Path = Path("/tmp/p"), **kw):
    base = dict(point_dir=tmp, image="lmsysorg/sglang:v0.5.23", engine="sglang", mounts=("/models:/models",),
                gpus=("2", "3"), container_name="harness-qwen-c4-30000")
    base.update(kw)
    return LaunchContext(**base)


def test_redaction():
    assert redact_env({"HF_TOKEN": "x", "AWS_SECRET_ACCESS_KEY": "y", "DB_PASSWORD": "z", "SGLANG_X": "1"}) == {
        "AWS_SECRET_ACCESS_KEY": "<redacted>", "DB_PASSWORD": "<redacted>", "HF_TOKEN": "<redacted>",
        "SGLANG_X": setting_hash("1")}   # a name outside the allow-list: its value's hash
    assert redact_argv(["-e", "HF_TOKEN=abc", "-e", "A=1", "-e", "CUDA_VISIBLE_DEVICES=0"]) == [
        "-e", "HF_TOKEN=<redacted>", "-e", f"A={setting_hash('1')}", "-e", "CUDA_VISIBLE_DEVICES=0"]


def _tail(argv: list[str], image: str) -> list[str]:
    """What runs inside the container: everything after the image argument."""
    return argv[argv.index(image) + 1:]


def test_docker_capture_runs_the_servers_interpreter_inside_the_same_image():
    argv = capture_argv(get_launcher("docker"), SGLANG, ENV, ctx(), script="SCRIPT")
    server = get_launcher("docker").render(SGLANG, ENV, ctx())
    assert _tail(argv, "lmsysorg/sglang:v0.5.23") == ["python3", "-c", "SCRIPT", "/models/m"]
    # the same docker options (GPUs, network, mounts, env) as the server, in a container of its own
    assert argv[argv.index("--name") + 1] == "fingerprint-harness-qwen-c4-30000"
    strip = {"--name", "harness-qwen-c4-30000", "fingerprint-harness-qwen-c4-30000"}
    assert [a for a in argv[:argv.index("lmsysorg/sglang:v0.5.23")] if a not in strip] == \
        [a for a in server[:server.index("lmsysorg/sglang:v0.5.23")] if a not in strip]
    assert "-e" in argv and "HF_TOKEN" in argv and '"device=2,3"' in argv
    assert "hf_secret" not in " ".join(argv)   # docker takes a secret's value from its own environment


def test_enroot_pyxis_apptainer_captures_run_inside_the_container():
    enroot = capture_argv(get_launcher("enroot"), SGLANG, ENV, ctx(image_path="/c/sglang.sqsh"), script="S")
    assert enroot[:3] == ["enroot", "start", "--rw"] and _tail(enroot, "/c/sglang.sqsh") == [
        "python3", "-c", "S", "/models/m"]
    named = capture_argv(get_launcher("enroot"), SGLANG, ENV, ctx(), script="S")   # an enroot container by name
    assert _tail(named, "harness-qwen-c4-30000") == ["python3", "-c", "S", "/models/m"]
    pyxis = capture_argv(get_launcher("pyxis"), SGLANG, ENV, ctx(), script="S")
    assert pyxis[0] == "srun" and "--container-image=lmsysorg/sglang:v0.5.23" in pyxis
    assert pyxis[-4:] == ["python3", "-c", "S", "/models/m"]
    app = capture_argv(get_launcher("apptainer"), SGLANG, ENV, ctx(), script="S")
    assert app[:4] == ["apptainer", "exec", "--nv", "--cleanenv"]
    assert _tail(app, "docker://lmsysorg/sglang:v0.5.23") == ["python3", "-c", "S", "/models/m"]
    assert "SGLANG_X=1" not in app   # off the allow-list: through APPTAINERENV_, as the server gets it
    assert get_launcher("apptainer").process_env(ENV, ctx())["APPTAINERENV_SGLANG_X"] == "1"


def test_local_simulator_capture_uses_the_simulators_interpreter():
    argv = capture_argv(get_launcher("local"), SIM, {}, ctx(engine="sim"), script="S")
    assert argv == [sys.executable, "-c", "S", "sim-model"]
    venv_server = ["/opt/venv/bin/python3", "-m", "sglang.launch_server", "--model", "/m"]
    assert capture_argv(get_launcher("local"), venv_server, {}, ctx(), script="S")[0] == "/opt/venv/bin/python3"


def test_recorded_capture_argv_names_the_script_and_redacts():
    argv = command_view(recorded_capture_argv(get_launcher("docker"), SGLANG, ENV, ctx()), {})[0]   # as written
    assert "HF_TOKEN" in argv and "hf_secret" not in " ".join(argv)
    assert argv[argv.index("-c") + 1].startswith("<fingerprint_capture.py sha256=")


@pytest.mark.parametrize("kind", ["local", "docker", "enroot", "pyxis", "apptainer"])
def test_recorded_capture_command_holds_no_secret(kind):
    env = {"HF_TOKEN": "hf_capture_1", "STORE_URL": "https://u:pw-capture-2@h/p", "SGLANG_MAX_TOKENS": "8"}
    argv = command_view(recorded_capture_argv(get_launcher(kind), SGLANG + ["--api-key", "sk-capture-3"], env, ctx()),
                        {})[0]   # as written to fingerprint_command.txt
    assert "capture-" not in " ".join(argv) and "hf_capture" not in " ".join(argv)
    assert argv[argv.index("-c") - 1] == "python3" and argv[-1] == "/models/m"


def test_capture_script_is_standalone():
    """It runs in an image without the harness: only the standard library, no harness imports."""
    text = CAPTURE_SCRIPT.read_text()
    assert "import harness" not in text and "from harness" not in text
    compile(text, str(CAPTURE_SCRIPT), "exec")


def test_real_capture_through_the_local_launcher(tmp_path):
    """The simulator's own interpreter captures srt-slurm's keys with srt-slurm's types."""
    data, record = capture_in_server_env(get_launcher("local"), SIM, {"SGLANG_X": "1", "HF_TOKEN": "t"},
                                         ctx(tmp_path, engine="sim", gpus=None))
    assert data is not None, record
    assert record["exit_code"] == 0 and record["python_executable"] == sys.executable
    for key, kind in SRT_SLURM_TYPES.items():
        assert isinstance(data[key], kind), key
    assert data["model"] is None      # "sim-model" is not a directory
    assert data["python_version"] == ".".join(map(str, sys.version_info[:3]))
    assert data["env"]["SGLANG_X"] == "1" and data["env"]["HF_TOKEN"] == "***REDACTED***"
    own = data["pip_packages"][sys.executable]
    assert any(line.startswith("agentx-harness==") for line in own) and own == sorted(own, key=str.lower)
    assert len(data["timestamp"]) == 20 and data["timestamp"].endswith("Z")
    if shutil.which("nvidia-smi") is None and record["gpu_source"] == "none":
        assert data["gpu"] == {"available": False}      # nothing invented without a GPU
        assert "nvidia-smi" in record["gpu_reason"]
    else:
        assert data["gpu"]["available"] is True and isinstance(data["gpu"]["gpus"], list)
        assert {"name", "driver", "memory"} <= set(data["gpu"]["gpus"][0])


def test_a_failed_capture_is_recorded_not_fatal(tmp_path):
    data, record = capture_in_server_env(get_launcher("local"), ["/nonexistent/python3", "-m", "x"], {},
                                         ctx(tmp_path, gpus=None))
    assert data is None and "FileNotFoundError" in record["error"]
    fp = build_fingerprint(captured=None, capture=record, server={}, image="img", digest={"digest": None},
                           engine="sglang", server_argv=["python3"], server_env={}, launcher="local",
                           harness={"commit": "abc"})
    assert fp["python_version"] == "unavailable" and fp["gpu"] == "unavailable"   # srt-slurm's sentinel
    assert "FileNotFoundError" in fp["packages_error"]["*"]   # the fingerprint says why it has no packages


def test_parse_capture_takes_the_marker_line():
    payload = {"hostname": "n1"}
    out = "pyxis: importing\n" + fingerprint_capture.MARKER + json.dumps(payload) + "\n"
    assert parse_capture(out) == payload
    assert parse_capture("no marker\n") is None


def test_fingerprint_order_is_srt_slurms_then_extras_alphabetically():
    captured = {k: "x" for k in reversed(FIELD_ORDER)} | {"env": {}}
    fp = build_fingerprint(captured=captured, capture={"z": 1, "a": 2}, server={"version": "0.5.23", "b": {"y": 1}},
                           image="img", digest={"digest": None, "digest_reason": "r"}, engine="sim",
                           server_argv=["python3", "-e", "HF_TOKEN=s"],
                           server_env={"SGLANG_BUILD_COMMIT": "c1c287a4", "HF_TOKEN": "s"}, launcher="local",
                           harness={"commit": "abc", "version": "0.1.0"})
    keys = list(fp)
    assert keys[:len(FIELD_ORDER)] == list(FIELD_ORDER)
    assert keys[len(FIELD_ORDER):] == ["capture", "engine", "env", "harness", "image", "launcher",
                                         "schema_version", "server"]
    assert fp["image"] == {"reference": "img", "digest": None, "digest_reason": "r",
                           "env": {"SGLANG_BUILD_COMMIT": "c1c287a4"}}
    assert list(fp["capture"]) == ["a", "z"] and fp["harness"]["commit"] == "abc"
    written = json.loads(json_text(fp))   # as its writer writes it (`harness.artifacts`): secrets redacted, order kept
    assert list(written) == keys
    assert written["server"]["env"]["HF_TOKEN"] == "<redacted>" and written["server"]["argv"][-1] == "HF_TOKEN=<redacted>"


def test_image_digest_says_why_it_is_absent():
    for kind in ("local", "enroot", "pyxis", "apptainer"):
        out = image_digest(kind, "img")
        assert out["digest"] is None and out["digest_reason"]


def test_a_freeze_that_fails_or_runs_past_its_time_is_named(monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    monkeypatch.setattr(fingerprint_capture.shutil, "which", lambda tool: None)   # only PY's own freeze
    errors: dict[str, str] = {}
    with ThreadPoolExecutor(2) as pool:
        got = fingerprint_capture.pip_packages(sys.executable, pool, errors)   # `-m pip` runs, lists packages
    assert sys.executable in got and errors == {}
    errors = {}
    with ThreadPoolExecutor(2) as pool:
        got = fingerprint_capture.pip_packages("/nonexistent/python3", pool, errors)
    assert got == {} and "did not run" in errors["/nonexistent/python3"]
    slow = "/bin/sleep"
    assert fingerprint_capture.run_why([slow, "5"], 0.5) == (None, f"`{slow} 5` ran past 0.5 s")
    out, why = fingerprint_capture.run_why([sys.executable, "-c", "import sys; sys.exit('boom')"])
    assert out is None and "exited 1: boom" in why


def test_fingerprint_diff_says_not_captured_instead_of_removals():
    from harness.point.fingerprints.fingerprint_diff import fingerprint_diff

    full = {"hostname": "h", "pip_packages": {"/py": ["tiktoken==0.14.0", "torch==2.9.0"], "pip": ["a==1"]}}
    lost_one = {"hostname": "h", "pip_packages": {"pip": ["a==1"]},
                "packages_error": {"/py": "`/py -m pip freeze` ran past 180 s"}}
    assert fingerprint_diff(full, lost_one) == [
        "pip_packages./py: not captured in B (`/py -m pip freeze` ran past 180 s)"]
    empty = {"hostname": "h", "pip_packages": {}}
    assert fingerprint_diff(empty, full) == ["pip_packages: not captured in A (no packages listed)"]
    failed = {"hostname": "h", "pip_packages": "unavailable", "packages_error": {"*": "CaptureEnded: ran past 300 s"}}
    assert fingerprint_diff(full, failed) == ["pip_packages: not captured in B (CaptureEnded: ran past 300 s)"]
    moved = {"hostname": "h", "pip_packages": {"/py": ["tiktoken==0.15.0", "torch==2.9.0"], "pip": ["a==1"]}}
    assert fingerprint_diff(full, moved) == ['pip_packages./py.tiktoken: "0.14.0" -> "0.15.0"']


def test_package_lines_keep_their_versions_in_a_fingerprint(tmp_path):
    captured = {k: "x" for k in ("hostname",)}
    captured["pip_packages"] = {"/py": ["asttokens==2.4.1", "tiktoken==0.14.0", "tokenizers==0.20.3"]}
    fp = build_fingerprint(captured=captured, capture={}, server={}, image="img", digest={"digest": None},
                           engine="sglang", server_argv=["python3"], server_env={}, launcher="local",
                           harness={"commit": "abc"})
    assert fp["pip_packages"] == captured["pip_packages"] and "packages_error" not in fp

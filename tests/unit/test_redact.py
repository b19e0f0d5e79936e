"""harness.redact: the name rule, every form a secret is written in, sealing, and where it is applied
(the plan's fingerprint, the worker fingerprint, the artifact writers, the CLI's output, the sweep plan)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness import redact
from harness.redact import (
    REDACTED,
    is_secret_name,
    redact_argv,
    redact_data,
    redact_env,
    redact_text,
    seal,
    sealed_numbers,
    unseal,
)
from harness.redact_plain import is_plain_env, setting_hash

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _forget() -> None:
    redact.forget_all()
    yield
    redact.forget_all()


@pytest.mark.parametrize("name", [
    "HF_TOKEN", "hf_token", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY", "MY_DB_PASSWD", "DB_PASSWORD",
    "PGPASSWORD", "GITHUB_PAT", "CLIENT_SECRET", "TOKEN", "SECRET", "--api-key", "--admin-api-key", "api_key",
    "admin_api_key", "ssl_keyfile_password", "--ssl-keyfile-password", "OPENAI_API_KEY", "hf-token",
])
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", [
    "SGLANG_MAX_TOKENS", "MAX_TOKENS", "SGLANG_SIMULATE_ACC_TOKEN_MODE", "HF_TOKEN_PATH", "--api-key-file",
    "ssl_keyfile", "--ssl-keyfile", "image_path", "PATH", "KEY", "PAT", "TOKENIZER", "tokenizer_path",
    "config_key", "golden_key", "model_key", "time_to_first_token", "time_to_second_token",
    "kt_max_deferred_experts_per_token", "--kt-max-deferred-experts-per-token", "joules_per_output_token",
    "eos_token", "bos_token", "speculative_num_draft_tokens", "max_total_tokens", "KEYS", "SECRETS_DIR",
    "HARNESS_SECRETS", "SGLANG_PATCH",
])
def test_names_that_only_look_secret(name: str) -> None:
    assert not is_secret_name(name)


def test_argv_every_flag_form() -> None:
    argv = ["python3", "-m", "sglang.launch_server", "--api-key", "sk-one", "--admin-api-key=sk-two",
            "--api-key-file", "/run/key.txt", "--max-total-tokens", "4096", "--port", "8000",
            "-e", "HF_TOKEN=hf_three", "-e", "SGLANG_MAX_TOKENS=7", "--url", "https://bob:pw-four@host/x"]
    assert redact_argv(argv) == [
        "python3", "-m", "sglang.launch_server", "--api-key", REDACTED, f"--admin-api-key={REDACTED}",
        "--api-key-file", "/run/key.txt", "--max-total-tokens", "4096", "--port", "8000",
        "-e", f"HF_TOKEN={REDACTED}", "-e", f"SGLANG_MAX_TOKENS={setting_hash('7')}", "--url", f"https://bob:{REDACTED}@host/x"]
    assert argv[4] == "sk-one"  # a copy: what is launched keeps its values


def test_text_every_form() -> None:
    cmd = ("python3 -m sglang.launch_server --enable-metrics --api-key sk-one --admin-api-key='sk two' "
           "--port 8000 --max-total-tokens 4096\nHF_TOKEN=hf_three\nGITHUB_PAT=\"ghp four\"\nSGLANG_MAX_TOKENS=8\n"
           "fetch https://ghp_five@github.com/o/r and https://bob:six@h:9/p?a=1&token=seven&key=eight#f\n"
           "ServerArgs(model_path='m', api_key='nine', max_total_tokens=5)\n"
           '{"WANDB_API_KEY": "ten", "config_key": "quickstart-sim", "time_to_first_token": "11"}\n'
           "--set server.env.MY_DB_PASSWD=twelve --set args.api-key=thirteen --set client.duration_s=5")
    out = redact_text(cmd)
    for secret in ("sk-one", "sk two", "hf_three", "ghp four", "ghp_five", "six", "seven", "eight", "nine",
                   "ten", "twelve", "thirteen"):
        assert secret not in out, secret
    for kept in ("--enable-metrics", "--port 8000", "--max-total-tokens 4096", "SGLANG_MAX_TOKENS=8", "a=1",
                 "model_path='m'", "max_total_tokens=5", '"config_key": "quickstart-sim"',
                 '"time_to_first_token": "11"', "client.duration_s=5", "github.com/o/r", "bob:", "&key=<redacted>#f"):
        assert kept in out, kept
    assert "--admin-api-key='<redacted>'" in out and "api_key='<redacted>'" in out


def test_no_secret_no_change() -> None:
    text = "python3 -m harness.sim --port 8000 --max-running-requests 32 http://127.0.0.1:8000/v1 x=1 --note 'a b'"
    assert redact_text(text) == text


def test_env_and_nested_data() -> None:
    env = {"HF_TOKEN": "hf_x1", "SGLANG_MAX_TOKENS": "8", "STORE_URL": "s3://k:pw_x2@bucket/p", "EMPTY_KEY": ""}
    # outside the allow-list a value is its hash (of the text with the URL's password masked)
    assert redact_env(env) == {"HF_TOKEN": REDACTED, "SGLANG_MAX_TOKENS": setting_hash("8"),
                               "STORE_URL": setting_hash(f"s3://k:{REDACTED}@bucket/p"), "EMPTY_KEY": ""}
    data = {"config_key": "c", "golden_key": "g", "conc": 4, "overrides": ["server.env.HF_TOKEN=hf_x3"],
            "server_info": {"api_key": "sk_x4", "max_total_tokens": 10, "time_to_first_token": {"avg": 1.0},
                            "joules_per_output_token": 0.5, "admin_api_key": None},
            "zip": {"env": {"GITHUB_PAT": ["a1", None, "a3"]}}}
    assert redact_data(data) == {
        "config_key": "c", "golden_key": "g", "conc": 4, "overrides": [f"server.env.HF_TOKEN={REDACTED}"],
        "server_info": {"api_key": REDACTED, "max_total_tokens": 10, "time_to_first_token": {"avg": 1.0},
                        "joules_per_output_token": 0.5, "admin_api_key": None},
        "zip": {"env": {"GITHUB_PAT": [REDACTED, None, REDACTED]}}}
    assert redact_data(redact_data(data)) == redact_data(data)


def test_remembered_values_are_masked_anywhere() -> None:
    redact.remember(["a-long-secret-value", "short"])
    assert redact_text("log: connecting with a-long-secret-value now") == f"log: connecting with {REDACTED} now"
    assert redact_text("short stays") == "short stays"  # too short to remember: it would mask ordinary text
    assert redact_data({"note": ["x", "a-long-secret-value"]}) == {"note": ["x", REDACTED]}


def test_scrub_log(tmp_path: Path) -> None:
    from harness.artifacts import scrub_log

    log = tmp_path / "server.log"
    log.write_text("server_args=ServerArgs(api_key='sk-planted-1')\nready\n")
    scrub_log(log)
    assert "sk-planted-1" in log.read_text()  # nothing remembered: the log is left alone
    redact.remember(["sk-planted-1"])
    scrub_log(log)
    assert log.read_text() == f"server_args=ServerArgs(api_key='{REDACTED}')\nready\n"
    assert [p.name for p in tmp_path.iterdir()] == ["server.log"]


def test_seal_and_unseal() -> None:
    data = {"points": [{"server": {"env": {"HF_TOKEN": "hf_a", "X": "1", "U": "https://u:pw_b@h"},
                                   "argv": ["--api-key", "sk_c", "--port", "1"]},
                        "settings": {"env": {"HF_TOKEN": REDACTED}}},
                       {"server": {"env": {"HF_TOKEN": "hf_a"}, "argv": []}}]}
    sealed, values = seal(data)
    # a value outside the allow-list (`X`, `U`) travels sealed too
    assert values == {"1": "hf_a", "2": "1", "3": "https://u:pw_b@h", "4": "sk_c"}
    assert sealed["points"][0]["server"] == {"env": {"HF_TOKEN": "<redacted:1>", "X": "<redacted:2>",
                                                     "U": "<redacted:3>"},
                                             "argv": ["--api-key", "<redacted:4>", "--port", "1"]}
    assert sealed["points"][1]["server"]["env"]["HF_TOKEN"] == "<redacted:1>"
    assert sealed_numbers(sealed) == {"1", "2", "3", "4"}
    assert redact_data(sealed) == sealed  # the writers keep placeholders as they are
    assert unseal(sealed, values) == data


def test_secret_never_moves_the_recipe_fingerprint() -> None:
    from harness.recipe.points import load_plans

    recipe = ROOT / "recipes" / "quickstart-sim.yaml"

    def plan(*overrides: str):  # noqa: ANN202
        return load_plans(recipe, ["c4"], list(overrides))[1][0]

    a = plan("server.env.HF_TOKEN=hf_value_one", "server.args.api-key=sk-value-one",
             "server.env.STORE_URL=https://u:pw-one@h/p")
    b = plan("server.env.HF_TOKEN=hf_value_two", "server.args.api-key=sk-value-two",
             "server.env.STORE_URL=https://u:pw-two@h/p")
    c = plan("server.env.HF_TOKEN=hf_value_one", "server.args.api-key=sk-value-one",
             "server.env.STORE_URL=https://u:pw-one@h/p", "server.env.SGLANG_MAX_TOKENS=9")
    d = plan("server.env.HF_TOKEN=hf_value_one", "server.args.api-key=sk-value-one",
             "server.env.STORE_URL=https://u:pw-one@other/p")
    assert a.fingerprint == b.fingerprint
    assert a.fingerprint != c.fingerprint and a.fingerprint != d.fingerprint  # non-secrets still count
    assert "hf_value_one" not in json.dumps(a.settings) and "sk-value-one" not in json.dumps(a.settings)
    # what is launched is unchanged
    assert a.server.env["HF_TOKEN"] == "hf_value_one"
    launched = a.server.launch_argv()
    assert launched[launched.index("--api-key") + 1] == "sk-value-one" and a.server.api_key == "sk-value-one"
    assert "sk-value-one" not in a.server.argv   # the key is held apart from the command the plan carries
    assert a.server.env["STORE_URL"] == "https://u:pw-one@h/p"


def test_a_numeric_api_key_is_a_secret_too() -> None:
    from harness.recipe.points import load_plans

    recipe = ROOT / "recipes" / "quickstart-sim.yaml"
    one, two = (load_plans(recipe, ["c4"], [f"server.args.api-key={v}"])[1][0] for v in (123456, 654321))
    assert one.fingerprint == two.fingerprint and one.settings["args"]["api-key"] == REDACTED


def test_worker_fingerprint_redacts_what_sglang_echoes(tmp_path: Path) -> None:
    from harness.artifacts import write_foreign_json
    from harness.point.fingerprints.fingerprint import build_fingerprint

    # /get_server_info of SGLang returns its ServerArgs, api_key included
    server = {"api_key": "sk-echoed", "admin_api_key": "sk-admin", "model_path": "m", "max_total_tokens": 5,
              "launch_command": "python3 -m sglang.launch_server --api-key sk-echoed"}
    # what the capture inside the server's environment saw (a pip line with credentials in its URL)
    captured = {"env": {"SGLANG_X": "1", "WANDB_API_KEY": "wb-inside"},
                "pip_packages": {"python3": ["pkg @ https://user:tok-inside@pypi.example/pkg.whl"]}}
    fp = build_fingerprint(captured=captured, capture={}, server=server, image="img", digest={"digest": None},
                           engine="sglang", server_argv=["--api-key", "sk-argv"],
                           server_env={"HF_TOKEN": "hf_env", "A": "1"}, launcher="local", harness={"commit": None})
    written = write_foreign_json(tmp_path / "fingerprint_agg_w0.json", fp)   # as the server stage writes it
    text = written.read_text()
    for secret in ("sk-echoed", "sk-admin", "sk-argv", "hf_env", "wb-inside", "tok-inside"):
        assert secret not in text
    recorded = json.loads(text)
    assert recorded["server"]["server_info"]["model_path"] == "m"
    assert recorded["server"]["env"]["A"] == setting_hash("1")   # a neutral name: its value's hash


def test_simulator_server_info_does_not_echo_the_api_key() -> None:
    from harness.sim.frontend.app import resolve, server_info
    from harness.sim.frontend.cli import build_parser

    argv = ["--model-path", "demo/agentic-coder-8b", "--api-key", "sk-sim-planted", "--admin-api-key=sk-sim-adm",
            "--sim-profile", "demo"]
    args = build_parser().parse_args(argv)
    info = server_info(resolve(args, {}), argv, {})
    text = json.dumps(info, default=str)
    assert "sk-sim-planted" not in text and "sk-sim-adm" not in text
    assert info["api_key"] == REDACTED and "--api-key <redacted>" in info["launch_command"]


def test_writers_and_cli_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness import cli
    from harness.artifacts import append_text, write_foreign_json, write_json, write_text

    write_json(tmp_path / "a.json", {"env": {"HF_TOKEN": "hf_w1"}, "argv": ["--api-key", "sk_w2"]})
    write_foreign_json(tmp_path / "b.json", {"cmd": "x --api-key sk_w3"})
    write_text(tmp_path / "c.txt", "HF_TOKEN=hf_w4\n")
    append_text(tmp_path / "d.log", "launching --admin-api-key=sk_w5\n")
    for path in tmp_path.iterdir():
        assert "_w" not in path.read_text(), path
    code = cli.main(["plan", str(ROOT / "recipes" / "quickstart-sim.yaml"), "--point", "c4", "--json",
                     "--set", "server.env.WANDB_API_KEY=wandb_cli_secret", "--set", "args.api-key=sk_cli_secret"])
    out = capsys.readouterr()
    assert code == 0 and "wandb_cli_secret" not in out.out + out.err and "sk_cli_secret" not in out.out + out.err
    assert json.loads(out.out)["points"][0]["server"]["env"]["WANDB_API_KEY"] == REDACTED
    code = cli.main(["plan", str(ROOT / "recipes" / "quickstart-sim.yaml"), "--point", "c4",
                     "--set", "server.env.WANDB_API_KEY=wandb_cli_secret", "--set", "args.api-key=sk_cli_secret"])
    out = capsys.readouterr()
    assert code == 0 and "wandb_cli_secret" not in out.out + out.err and "sk_cli_secret" not in out.out + out.err
    assert "--api-key" in out.out


def test_sweep_plan_secrets_come_back_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.artifacts import write_json
    from harness.errors import UserError
    from harness.recipe.points import load_plans
    from slurm.sweep_plan import SECRETS_ENV, load_sweep_plan

    plans = load_plans(ROOT / "recipes" / "quickstart-sim.yaml", ["c4"], ["server.env.HF_TOKEN=hf_sweep_secret"])[1]
    sealed, values = seal({"out_dir": str(tmp_path), "points": [p.model_dump() for p in plans]})
    path = write_json(tmp_path / "plan.json", sealed)
    assert "hf_sweep_secret" not in path.read_text()
    monkeypatch.delenv(SECRETS_ENV, raising=False)
    with pytest.raises(UserError, match=r"1 secret value\(s\) of this plan are not in \$HARNESS_SECRETS"):
        load_sweep_plan(path)
    monkeypatch.setenv(SECRETS_ENV, json.dumps(values))
    sweep = load_sweep_plan(path)
    assert sweep.points[0].server.env["HF_TOKEN"] == "hf_sweep_secret"
    import os

    assert SECRETS_ENV not in os.environ  # no child process inherits it


def test_recipe_diff_says_a_secret_changed_without_its_values() -> None:
    from harness.recipe.diff import diff_recipes
    from harness.recipe.load import load_recipe
    from harness.recipe.schema import Recipe

    base = load_recipe(ROOT / "recipes" / "quickstart-sim.yaml")

    def with_server(env: dict[str, str], args: dict[str, object]) -> Recipe:
        server = base.server.model_copy(update={"env": env, "args": {**base.server.args, **args}})
        return base.model_copy(update={"server": server})

    result = diff_recipes(with_server({"HF_TOKEN": "hf_diff_old"}, {"api-key": "sk-diff-old"}),
                          with_server({"HF_TOKEN": "hf_diff_new", "SGLANG_X": "1"}, {"api-key": "sk-diff-new"}))
    text = result.render() + result.model_dump_json()
    assert "env HF_TOKEN <redacted> → <redacted>" in text and "api-key <redacted> → <redacted>" in text
    assert "env SGLANG_X unset → 1" in text
    assert "diff_old" not in text and "diff_new" not in text


def test_a_quoted_secret_spanning_lines() -> None:
    assert redact_text("HF_TOKEN='hf_line_one\nhf_line_two' NEXT=1") == "HF_TOKEN='<redacted>' NEXT=1"


@pytest.mark.parametrize("folder", ["results", "inferencex-contract", "clusters", "recipes", "check"])
def test_real_artifacts_without_secrets_pass_unchanged(folder: str) -> None:
    """No false positives on what the harness and InferenceX really write (results, rows, AIPerf exports)."""
    files = [p for p in (ROOT / "tests" / "fixtures" / folder).rglob("*") if p.is_file()]
    assert files
    for path in files:
        text = path.read_text(errors="replace")
        assert redact_text(text) == text, path
        if path.suffix == ".json":
            data = json.loads(text)
            assert redact_data(data) == data, path


@pytest.mark.parametrize("kind", ["local", "docker", "enroot", "pyxis", "apptainer"])
def test_every_launcher_command_as_recorded_holds_no_secret(kind: str) -> None:
    """`server_command.txt` is the launcher's argv through `redact_argv`, then the env through `redact_env`."""
    import shlex

    from launchers import LaunchContext, get_launcher

    server = ["python3", "-m", "sglang.launch_server", "--model-path", "/m", "--api-key", "sk-launch-1",
              "--admin-api-key=sk-launch-2", "--port", "30000"]
    env = {"HF_TOKEN": "hf_launch_3", "STORE_URL": "https://u:pw-launch-4@h/p", "SGLANG_MAX_TOKENS": "8"}
    ctx = LaunchContext(point_dir=Path("/tmp/p"), image="lmsysorg/sglang:v0.5.23", engine="sglang",
                        mounts=("/m:/m",), gpus=("0",), container_name="harness-c4")
    argv = get_launcher(kind).render(server, env, ctx)
    recorded = shlex.join(redact_argv(argv)) + "\n" + "".join(f"{k}={v}\n" for k, v in redact_env(env).items())
    assert "launch" not in recorded.replace("launch_server", "")
    assert f"SGLANG_MAX_TOKENS={setting_hash('8')}" in recorded and "--port 30000" in recorded
    assert "SGLANG_MAX_TOKENS=8" not in recorded


# Writers that may bypass harness.artifacts: what they write holds no recipe, plan or server data.
RAW_WRITERS = {
    "harness/artifacts.py": "the redacting writers themselves",
    "harness/traces/files.py": "trace corpus files",
    "harness/tokenizer/__init__.py": "the tokenizer's hub-cache ref (a revision hash)",
    "harness/tokenizer/build.py": "the demo tokenizer's files",
    "harness/power/sampler.py": "power.csv (GPU samples)",
    "harness/point/state/status_reserve.py": "the disk-full reserve's blocks (status.json goes in through json_text)",
    "launchers/process_group.py": "a child's own output (server.log is scrubbed by scrub_log once it stops)",
    "harness/check/changed.py": "golden curve files of a base revision, into a temp dir",
    "harness/commands/recipes/flags.py": "SGLang's flag table (static data)",
    "harness/commands/recipes/golden.py": "golden acceptance curves (static data)",
    "slurm/jobs.py": "a lock file",
    "slurm/images.py": "a lock file",
}
_RAW = re.compile(r"json\.dump\(|print\(json\.dumps|\.write_text\(|\.write_bytes\(|"
                                r"open\([^)]*[\"'][wa]b?[\"']")


def test_every_writer_goes_through_the_redaction() -> None:
    """A new file or `--json` writer must use harness.artifacts (write_json, write_text, append_text,
    print_json) or be listed above with why its data holds no secret."""
    offenders = []
    for top in ("harness", "slurm", "launchers"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith("harness/sim/") or rel in RAW_WRITERS:  # the simulator is the server, not us
                continue
            offenders += [f"{rel}: {line.strip()}" for line in path.read_text().splitlines() if _RAW.search(line)]
    assert offenders == []


@pytest.mark.parametrize("name", [
    "OPENAI_APIKEY", "AUTH_HEADER", "PRIVATE_KEY_PEM", "SGLANG_CREDENTIALS", "PASSPHRASE", "SESSION_COOKIE",
    "MY_COOKIE", "X_AUTHORIZATION", "DB_PASS", "--hf-token-value", "SESSIONID", "--private-repo-secret",
])
def test_setting_names_by_the_wider_rule(name: str) -> None:
    assert redact_env({name: "v-planted-1"}) == {name: REDACTED}
    assert redact_argv([f"--{name.lstrip('-').lower().replace('_', '-')}", "v-planted-2"])[1] == REDACTED
    assert "v-planted-3" not in redact_text(f"{name}=v-planted-3")


@pytest.mark.parametrize(("name", "value"), [
    ("SGLANG_MAX_TOKENS", "4096"), ("SGLANG_SIMULATE_ACC_TOKEN_MODE", "fixed"), ("HF_TOKEN_PATH", "/run/t"),
    ("--tokenizer-path", "/m/tok"), ("--speculative-token-map", "/m/map.pt"), ("--ssl-keyfile", "/k.pem"),
    ("--asr-max-concurrent-sessions", "8"), ("--bucket-inter-token-latency", "0.1"), ("AUTH_ENABLED", "true"),
    ("--forward-pass-metrics-ipc-name", "fpm"), ("--prefill-delayer-max-delay-passes", "3"),
])
def test_settings_that_only_look_secret_keep_their_values(name: str, value: str) -> None:
    """Not masked as secrets; an environment outside the allow-list records the value's hash."""
    assert redact_env({name: value}) == {name: value if is_plain_env(name) else setting_hash(value)}
    assert redact_argv([name, value]) == [name, value]


def test_a_boolean_flag_with_a_secret_word_keeps_the_next_flag() -> None:
    argv = ["--enable-streaming-session", "--port", "8000", "--enable-session-radix-cache", "--api-key", "sk-x1"]
    assert redact_argv(argv) == argv[:5] + [REDACTED]


def test_secrets_by_shape_anywhere() -> None:
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEplantedBODY\n-----END RSA PRIVATE KEY-----"
    text = (f"header Authorization: Bearer eyJplanted.TOKEN-1 and {pem} and "
            "https://hooks.example/x?access_token=hookplanted&ok=1 and https://u:pwplanted@h/")
    out = redact_text(text)
    for secret in ("eyJplanted.TOKEN-1", "MIIEplantedBODY", "hookplanted", "pwplanted"):
        assert secret not in out, secret
    assert "-----BEGIN RSA PRIVATE KEY-----" in out and "&ok=1" in out and "Bearer <redacted>" in out
    data = redact_data({"note": pem, "headers": ["Authorization: Bearer abcdefplanted"], "env": {"X": pem}})
    assert "MIIEplantedBODY" not in json.dumps(data) and "abcdefplanted" not in json.dumps(data)


def test_secret_names_a_recipe_or_profile_adds() -> None:
    assert redact_env({"MY_ODD_SETTING": "odd-value"}) == {"MY_ODD_SETTING": setting_hash("odd-value")}
    redact.add_secret_names(["MY_ODD_SETTING", "odd-flag"])
    assert redact_env({"MY_ODD_SETTING": "odd-value"}) == {"MY_ODD_SETTING": REDACTED}
    assert redact_argv(["--odd-flag", "x-value"]) == ["--odd-flag", REDACTED]
    assert redact_data({"server": {"my_odd_setting": "odd-value"}}) == {"server": {"my_odd_setting": REDACTED}}


def test_a_recipes_secret_names_reach_its_plans(tmp_path: Path) -> None:
    from harness.recipe.points import load_plans

    text = (ROOT / "recipes" / "quickstart-sim.yaml").read_text() + "secret_names: [MY_ODD_SETTING]\n"
    (tmp_path / "r.yaml").write_text(text)
    (tmp_path / "traces").symlink_to(ROOT / "recipes" / "traces")
    plan = load_plans(tmp_path / "r.yaml", ["c4"], ["server.env.MY_ODD_SETTING=odd-planted"])[1][0]
    assert plan.secret_names == ["MY_ODD_SETTING"] and plan.server.env["MY_ODD_SETTING"] == "odd-planted"
    assert "odd-planted" not in json.dumps(redact_data(plan.model_dump()))
    assert "odd-planted" not in json.dumps(plan.settings)


def test_a_secret_flags_value_is_masked_even_when_it_starts_with_a_dash() -> None:
    assert redact_argv(["--api-key", "-sk-dash1", "--port", "1"]) == ["--api-key", REDACTED, "--port", "1"]

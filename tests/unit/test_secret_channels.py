"""Secrets of many shapes, under neutral names, through every channel that records a setting: the allow-list
(`harness.redact_plain`) keeps them out whatever their shape, so a shape no list names is kept out too.

Channels: a recipe's `--set server.env.NAME=...` (the recipe's env and a cluster profile's env reach the plan the
same way), the process environment the fingerprint captures, and what is written from them: `plan.json`, the
plan's identity, `server_command.txt` (a docker launch), `server_env.json`, the worker fingerprint, a record, the
variant directory's name and `--json` output. `_leaks` is the checker; a test of it plants leaks it must see."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.artifacts import json_text, write_command, write_foreign_json, write_json
from harness.point.state.variant import derived_name
from harness.redact_plain import SETTING_HASH, setting_hash

ROOT = Path(__file__).resolve().parents[2]


def _r(tag: str) -> str:
    """32 letters and digits of its own for one shape."""
    return "".join(c for c in base64.b64encode(hashlib.sha256(tag.encode()).digest() * 2).decode()
                   if c.isalnum())[:32]


def _shapes() -> dict[str, str]:
    """One value per shape (built here, so no whole token sits in the source); `a` is 32 letters and digits and
    `h` 64 hex digits of the shape's own."""
    shapes: dict[str, Callable[[str, str], str]] = {
        "gitlab_runner": lambda a, h: "glrt-" + a[:20], "gitlab_trigger": lambda a, h: "glptt-" + h[:40],
        "gitlab_deploy": lambda a, h: "gldt-" + a[:20], "slack_app": lambda a, h: f"xapp-1-A0{a[:10]}-1234567-{h}",
        "webhook": lambda a, h: "whsec_" + a, "google_client": lambda a, h: "GOCSPX-" + a[:28],
        "atlassian": lambda a, h: "ATATT3xFfGF0" + a + a[:20], "linear": lambda a, h: "lin_api_" + a + a[:8],
        "notion_old": lambda a, h: "secret_" + a + a[:11], "notion": lambda a, h: "ntn_" + a + a[:14],
        "doppler": lambda a, h: "dp.pt." + a + a[:11], "pulumi": lambda a, h: "pul-" + h[:40],
        "newrelic": lambda a, h: "NRAK-" + a[:27].upper(), "sentry": lambda a, h: "sntrys_eyJpYXQiOjE2" + a,
        "dockerhub": lambda a, h: "dckr_pat_" + a[:27], "grafana": lambda a, h: "glsa_" + a + "_" + h[:8],
        "postman": lambda a, h: "PMAK-" + h[:24] + "-" + h[24:58], "supabase": lambda a, h: "sbp_" + h[:40],
        "discord": lambda a, h: "MTA5" + a[:20] + ".Gx7Yz1." + a[4:31], "flyio": lambda a, h: "fo1_" + a,
        "k8s_bootstrap": lambda a, h: h[:6] + "." + h[6:22],
        "base64": lambda a, h: base64.b64encode(("user:" + a).encode()).decode(),
        "split": lambda a, h: a[:16] + " " + a[16:], "json_escaped": lambda a, h: '{\\"token\\": \\"' + a + '\\"}',
        "jwk_d": lambda a, h: json.dumps({"kty": "EC", "d": a + "Qw"}),
        "digest": lambda a, h: f'Digest username="u", response="{h[:32]}"', "bare40": lambda a, h: (a + a)[:40],
        "no_known_shape": lambda a, h: "Xk2" + a[::-1], "hf": lambda a, h: "hf_" + a,
        "github": lambda a, h: "ghp_" + a + "abcd", "openai": lambda a, h: "sk-proj-" + a,
        "aws_secret": lambda a, h: "wJalrXUtnFEMI/K7MDENG/" + a[:18], "stripe": lambda a, h: "sk_live_" + a[:24],
        "vault": lambda a, h: "hvs." + a, "sendgrid": lambda a, h: "SG." + a[:22] + "." + a[2:32] + "xyzAB",
        "npm": lambda a, h: "npm_" + a + "abcd", "pypi": lambda a, h: "pypi-AgEIcHlwaS5vcmc" + a + a[:20],
        "azure_sas": lambda a, h: "sv=2022&sig=" + a, "url_password": lambda a, h: f"https://u:{a[:12]}@db.example/p",
        "pem": lambda a, h: f"-----BEGIN PRIVATE KEY-----\n{a}\n-----END PRIVATE KEY-----",
        "short_pin": lambda a, h: h[:6], "age": lambda a, h: "AGE-SECRET-KEY-1" + a.upper(),
    }
    return {name: make(_r(name), hashlib.sha256(name.encode()).hexdigest()) for name, make in shapes.items()}


SHAPES = _shapes()
NAMES = {shape: f"MY_SETTING_{i}" for i, shape in enumerate(SHAPES)}


def _fragments(secret: str) -> list[str]:
    """What of a secret must not appear: it whole, JSON-escaped, and each piece of it (split on spaces, quotes and
    escapes) of 6 or more characters that holds a digit (not a word of the syntax around it: `Digest`, `"token`)."""
    pieces = {secret, json.dumps(secret)[1:-1]}
    for sep in ("\\", '"', " ", "\n"):
        pieces |= {p for s in list(pieces) for p in s.split(sep)}
    return sorted(p for p in pieces if len(p) >= 6 and any(c.isdigit() for c in p))


def _leaks(text: str) -> list[str]:
    """The shapes of `SHAPES` any of whose fragments appears in `text`."""
    return sorted(shape for shape, secret in SHAPES.items() if any(f in text for f in _fragments(secret)))


def _plan():  # noqa: ANN202
    from harness.recipe.points import load_plans

    overrides = [f"server.env.{NAMES[s]}={v}" for s, v in SHAPES.items()]
    return load_plans(ROOT / "recipes" / "quickstart-sim.yaml", ["c4"], overrides)[1][0]


def test_the_checker_sees_a_planted_leak() -> None:
    """A test of the test: each shape written as it is, JSON-escaped, or one piece of a split value is a leak."""
    assert _leaks(json.dumps({"env": SHAPES})) == sorted(SHAPES)
    assert _leaks("MY_SETTING=" + SHAPES["split"].split(" ")[1]) == ["split"]
    assert _leaks(json.dumps(SHAPES["json_escaped"])) == ["json_escaped"]
    assert _leaks(setting_hash(SHAPES["bare40"])) == []


def test_recipe_env_and_set_reach_no_written_file(tmp_path: Path) -> None:
    from launchers import LaunchContext, get_launcher

    plan = _plan()
    assert plan.server.env[NAMES["gitlab_runner"]] == SHAPES["gitlab_runner"]   # launched as given
    written = [
        write_json(tmp_path / "plan.json", plan.model_dump(mode="json")),
        write_json(tmp_path / "settings.json", {"settings": plan.settings}),
        write_json(tmp_path / "record.json", {"settings": plan.settings, "overrides": [
            f"server.env.{NAMES[s]}={v}" for s, v in SHAPES.items()]}),
    ]
    ctx = LaunchContext(point_dir=tmp_path, image="lmsysorg/sglang:v0.5.23", engine="sglang", mounts=(),
                        gpus=("0",), container_name="harness-c4")
    argv = get_launcher("docker").render(plan.server.launch_argv(), plan.server.env, ctx)
    written.append(write_command(tmp_path / "server_command.txt", [(None, argv, plan.server.env)]))
    for path in written:
        assert _leaks(path.read_text()) == [], path.name
    assert _leaks(json_text({"points": [plan.model_dump(mode="json")]})) == []   # `plan --json`
    recorded = json.loads(written[0].read_text())["server"]["env"]
    assert all(SETTING_HASH.fullmatch(recorded[n]) for n in NAMES.values())
    # values of no known shape are told apart by their hash (a known shape hashes as masked: rotation-stable)
    assert recorded[NAMES["no_known_shape"]] != recorded[NAMES["bare40"]] != recorded[NAMES["split"]]


def test_the_server_environment_and_the_fingerprint_hold_no_value(tmp_path: Path) -> None:
    from harness.point.fingerprints.fingerprint import build_fingerprint
    from harness.point.servers.server_env import check

    env = {NAMES[s]: v for s, v in SHAPES.items()}
    process_env = {f"{prefix}{name}": v for prefix in ("HF_", "NCCL_", "SGLANG_", "CUDA_")
                   for name, v in env.items()}   # what the capture reads by prefix
    record = check(env, {**env, **process_env}, "/proc/1/environ")
    server_env = write_json(tmp_path / "server_env.json", record)
    fp = build_fingerprint(captured={"env": process_env}, capture={}, server={}, image="img",
                           digest={"digest": None}, engine="sglang", server_argv=[], server_env=env,
                           launcher="local", harness={"commit": None}, effective_env=record)
    fingerprint = write_foreign_json(tmp_path / "fingerprint_agg_w0.json", fp)
    for path in (server_env, fingerprint):
        assert _leaks(path.read_text()) == [], path.name


@pytest.mark.parametrize("shape", ["gitlab_runner", "no_known_shape", "k8s_bootstrap", "split"])
def test_a_set_value_never_names_a_directory(shape: str) -> None:
    name = derived_name([f"server.env.MY_SETTING={SHAPES[shape]}", "args.max-running-requests=64"])
    assert _leaks(name) == [] and name.startswith("MY_SETTING=redacted-")
    assert name.endswith(",max-running-requests=64")   # a SGLang flag's value names it as written


def test_a_slurm_dry_run_writes_and_prints_no_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`submit --dry-run --json`: the Slurm plan, the job script and what it prints (valid JSON) hold no value."""
    from harness.cli import main

    sets = [a for s, v in SHAPES.items() for a in ("--set", f"server.env.{NAMES[s]}={v}")]
    assert main(["submit", str(ROOT / "recipes" / "quickstart-sim.yaml"), "--cluster",
                 str(ROOT / "clusters" / "local-ci.yaml"), "--dry-run", "--no-preflight", "--json", "--points", "c2",
                 *sets, "--out", str(tmp_path / "out")]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["dry_run"] is True
    assert _leaks(out) == [] and _leaks(err) == []
    written = sorted((tmp_path / "out").rglob("*.*"))
    assert written and all(_leaks(p.read_text()) == [] for p in written), [p.name for p in written]

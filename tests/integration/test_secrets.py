"""No secret leaves the process: a simulator point run with secrets planted in every input channel (recipe
server.env and server.args, a point's env, `--set` overrides, a URL's password and `?token=`, service tokens and
secrets by syntax under names that say nothing), then a report and an InferenceX export over it; every file
they write, every file's and directory's name and everything they print is searched for each planted value."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.secret_channels import ROOT, SECRETS, leaks, set_args, text_leaks, write_recipe

pytestmark = pytest.mark.slow


def _harness(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_run_and_report_write_and_print_no_secret(tmp_path: Path) -> None:
    recipe = write_recipe(tmp_path)
    out, report_dir = tmp_path / "runs", tmp_path / "report"
    printed: list[str] = []

    plan = _harness("plan", str(recipe), "--json", *set_args())
    printed += text_leaks("plan --json", plan.stdout + plan.stderr)
    assert plan.returncode == 0, plan.stderr
    doc = json.loads(plan.stdout)["points"][0]
    assert doc["server"]["env"]["HF_TOKEN"] == "<redacted>" and doc["server"]["env"]["SGLANG_MAX_TOKENS"].startswith("sha256:")   # not allow-listed: its hash

    human = _harness("plan", str(recipe), *set_args())
    printed += text_leaks("plan", human.stdout + human.stderr)

    run = _harness("run", str(recipe), "--point", "c4", "--duration", "8", "--out", str(out), *set_args())
    printed += text_leaks("run", run.stdout + run.stderr)
    pdirs = list(out.glob("it-secrets/variants/*/conc4"))
    assert len(pdirs) == 1, run.stdout + run.stderr
    status = json.loads((pdirs[0] / "status.json").read_text())
    assert status["state"] == "completed", status.get("reason")
    # the server really got the values: its command line as launched is recorded redacted, yet the point
    # ran with them (the simulator reports `api_key` redacted, so the fingerprint shows the marker)
    fingerprint = json.loads((pdirs[0] / "fingerprint_agg_w0.json").read_text())
    assert fingerprint["server"]["server_info"]["api_key"] == "<redacted>"
    assert fingerprint["server"]["env"]["SGLANG_MAX_TOKENS"].startswith("sha256:")   # not allow-listed: its hash
    command = (pdirs[0] / "server_command.txt").read_text()
    # a secret flag masked; an environment value outside the allow-list (a URL with a token in it) only its hash
    assert "--api-key '<redacted>'" in command and "SGLANG_REMOTE_STORE_URL=sha256:" in command

    report = _harness("report", str(out), "--out", str(report_dir))
    printed += text_leaks("report", report.stdout + report.stderr)
    assert report.returncode == 0, report.stderr
    report_json = _harness("report", str(out), "--json", "--out", str(report_dir))
    printed += text_leaks("report --json", report_json.stdout + report_json.stderr)

    assert {p.name for p in pdirs[0].iterdir()} >= {"plan.json", "status.json", "server_command.txt",
                                                    "client_command.txt", "fingerprint_agg_w0.json", "harness.log",
                                                    "server.log", "client.log"}
    # a secret `--set` names the variant, and the exported artifacts, by its key and a mark, never its value
    assert "AWS_SECRET_ACCESS_KEY=redacted-" in pdirs[0].parent.name
    exported = tmp_path / "exported"
    export = _harness("export", "--inferencex", str(out), str(exported), "--include-unofficial")
    printed += text_leaks("export", export.stdout + export.stderr)
    assert export.returncode == 0, export.stdout + export.stderr
    assert any("AWS_SECRET_ACCESS_KEY=redacted-" in p.name for p in exported.iterdir())

    assert sorted(report_dir.iterdir())
    assert leaks(out) + leaks(report_dir) + leaks(exported) + printed == []
    assert len(SECRETS) == 40

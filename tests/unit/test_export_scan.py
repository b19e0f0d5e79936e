"""The export's last check: a secret's shape left in a file it would write refuses the export, naming the file and
where in it, and nothing is exported; masked values, setting hashes and empty values pass."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.cli import main
from harness.report.results.export_scan import shapes_left
from tests.unit.test_export_inferencex import _point

GITHUB = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
GITLAB = "glpat-PlantedGitlabTok3n0123"
AIPERF_JSON = "agentic_k_conc4/aiperf_artifacts/profile_export_aiperf.json"


def _plant_aiperf_json(pdir: Path) -> None:
    body = {"input_config": {"endpoint": {"url": "http://127.0.0.1:30000", "api_key": None,
                                          "headers": [f"X-Trace: {GITLAB}"]}}}
    (pdir / "aiperf" / "profile_export_aiperf.json").write_text(json.dumps(body))


def _plant_server_log(pdir: Path) -> None:
    with (pdir / "server.log").open("a") as log:
        log.write("server_args=ServerArgs(api_key=None, admin_api_key=None)\n")
        log.write(f"pushing the model with {GITHUB}\n")


def _plant_jsonl(pdir: Path) -> None:
    lines = (pdir / "aiperf" / "profile_export.jsonl").read_text().splitlines()
    record = json.loads(lines[1])
    record["metadata"] = {**record.get("metadata", {}), "note": f"token={GITHUB}"}
    lines[1] = json.dumps(record)
    (pdir / "aiperf" / "profile_export.jsonl").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("plant", "where"), [
    (_plant_aiperf_json, f"{AIPERF_JSON}: $.input_config.endpoint.headers"),
    (_plant_server_log, "server_logs_k_conc4/server.log: line 3"),
    (_plant_jsonl, "agentic_k_conc4/aiperf_artifacts/profile_export.jsonl: line 2 $.metadata.note"),
])
def test_a_shape_planted_after_the_run_refuses_the_export_and_nothing_is_left(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], plant: Callable[[Path], None], where: str) -> None:
    pdir = _point(tmp_path / "run")
    plant(pdir)
    assert main(["export", "--inferencex", "--include-unofficial", str(tmp_path / "run"), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {where}: ") and "nothing was exported" in err[0], err
    assert GITHUB not in err[0] and GITLAB not in err[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]   # no OUT, no hidden staging directory


def test_masked_hashed_and_empty_values_pass_and_the_export_completes(tmp_path: Path) -> None:
    pdir = _point(tmp_path / "run")
    body = {"input_config": {"endpoint": {"api_key": "<redacted>", "token": None, "auth": ""},
                             "env": {"HF_TOKEN": "<redacted:1>", "MY_SETTING": "sha256:0123456789abcdef"},
                             "argv": ["serve", "--api-key", "<redacted>"], "git_commit": "9f" * 20}}
    (pdir / "aiperf" / "profile_export_aiperf.json").write_text(json.dumps(body))
    with (pdir / "server.log").open("a") as log:
        log.write("server_args=ServerArgs(api_key=None, ssl_keyfile_password=None, hf_token='')\n"
                  "HF_TOKEN=<redacted> Authorization: Bearer <redacted>\n")
    assert main(["export", "--inferencex", "--include-unofficial", str(tmp_path / "run"), str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / AIPERF_JSON).is_file()


def test_shapes_left_names_the_json_path_or_the_line() -> None:
    doc = {"server_args": {"foo": GITHUB, "api_key": "plain-words", "model": "Qwen/Qwen3-8B"},
           "argv": ["serve", "--admin-api-key", "abc"], "list": [{"ok": 1}, {"a b": GITLAB}]}
    assert shapes_left("rows/x.json", json.dumps(doc)) == [
        "rows/x.json: $.server_args.foo", "rows/x.json: $.server_args.api_key", "rows/x.json: $.argv",
        'rows/x.json: $.list[1]["a b"]']
    assert shapes_left("rows/x.json", json.dumps({GITHUB: 1})) == [f"rows/x.json: $.{GITHUB}"]
    text = "ok\nstill ok\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----\n"
    assert shapes_left("logs/server.log", text) == ["logs/server.log: line 3"]
    assert shapes_left("a.jsonl", '{"x": 1}\nnot json ' + GITHUB + "\n") == ["a.jsonl: line 2"]
    assert shapes_left("a.json", "not json " + GITHUB) == ["a.json: line 1"]


@pytest.mark.parametrize("clean", [
    '{"api_key": "<redacted>", "env": {"X": "sha256:0123456789abcdef"}, "variant": "HF_TOKEN=redacted-1a2b3c4d"}',
    '{"api_key": null, "hf_token": "", "password": "None", "openai_api_key": "EMPTY", "commit": "' + "ab" * 20 + '"}',
])
def test_shapes_left_passes_what_is_already_masked(clean: str) -> None:
    assert shapes_left("x.json", clean) == [] and shapes_left("x.log", clean) == []


def test_aiperfs_own_log_is_exported_masked_not_refused(tmp_path: Path) -> None:
    """AIPerf logs its settings: a dataset cache's `key=<32 hex>` reads as a secret's shape. Its logs are exported
    through the redacting writer (read by people, never parsed), so the export completes and holds no value."""
    pdir = _point(tmp_path / "run")
    (pdir / "aiperf" / "logs").mkdir(parents=True, exist_ok=True)
    (pdir / "aiperf" / "logs" / "aiperf.log").write_text(
        "dataset_manager - INFO - Memory-mapped dataset cache HIT (key=83082ca63cb18ea84a03570fd0eee888)\n"
        f"worker - DEBUG - headers {GITHUB}\n")
    assert main(["export", "--inferencex", "--include-unofficial", str(tmp_path / "run"), str(tmp_path / "out")]) == 0
    log = next((tmp_path / "out").rglob("aiperf.log")).read_text()
    assert "83082ca63cb18ea84a03570fd0eee888" not in log and GITHUB not in log and "cache HIT (key=" in log

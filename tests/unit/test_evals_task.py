"""The shipped GSM8K data and the lm-eval task that reads it, loaded by lm-eval itself, offline."""

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from harness.evals import lmeval_client

TASK_DIR = lmeval_client.TASK_DIRS["gsm8k"]
SHA256 = {"test.jsonl": "3730d312f6e3440559ace48831e51066acaca737f6eabec99bccb9e4b3c39d14",
          "train.jsonl": "17f347dc51477c50d4efb83959dbb7c56297aba886e5544ee2aaed3024813465"}


@pytest.mark.parametrize("name,count", [("test.jsonl", 1319), ("train.jsonl", 7473)])
def test_data_files_are_the_recorded_upstream_files(name, count):
    data = (TASK_DIR / name).read_bytes()
    assert hashlib.sha256(data).hexdigest() == SHA256[name]
    rows = [json.loads(line) for line in data.decode().splitlines()]
    assert len(rows) == count
    assert all(set(r) == {"question", "answer"} and "\n#### " in r["answer"] for r in rows)
    assert "MIT License" in (TASK_DIR / "LICENSE").read_text()
    assert "3101c7d5072418e28b9008a6636bde82a006892c" in (TASK_DIR / "README.md").read_text()


def test_task_config():
    cfg = yaml.safe_load((TASK_DIR / "gsm8k.yaml").read_text())
    assert cfg["task"] == "gsm8k" and cfg["num_fewshot"] == 5 and cfg["dataset_path"] == "json"
    assert cfg["dataset_kwargs"]["data_files"] == {"train": "train.jsonl", "test": "test.jsonl"}
    assert [f["name"] for f in cfg["filter_list"]] == ["strict-match", "flexible-extract"]
    assert cfg["filter_list"][0]["filter"][0]["regex_pattern"] == "#### (\\-?[0-9\\.\\,]+)"
    assert cfg["metric_list"][0]["metric"] == "exact_match"
    assert "#### [number]" in cfg["doc_to_text"]


def test_lm_eval_loads_the_task_offline(monkeypatch, tmp_path):
    from lm_eval.tasks import TaskManager, get_task_dict

    for k, v in lmeval_client.build_env(tmp_path).items():
        monkeypatch.setenv(k, v)
    monkeypatch.chdir(TASK_DIR)
    task = get_task_dict([str(lmeval_client.task_file("gsm8k"))], TaskManager())["gsm8k"]
    assert len(task.test_docs()) == 1319 and len(task.fewshot_docs()) == 7473
    ctx = task.fewshot_context(task.test_docs()[0], num_fewshot=5)
    assert ctx.count("Question: ") == 6
    assert ctx.endswith("formatted as: #### [number]\nAnswer:")


def test_lm_eval_command():
    argv = lmeval_client.build_argv(task="gsm8k", model="m", base_url="http://h:1", conc=48,
                                    context_length=131072, output_dir=lmeval_client.TASK_DIRS["gsm8k"], limit=None)
    assert argv[1:5] == ["-m", "lm_eval", "--model", "local-chat-completions"]
    assert "--apply_chat_template" in argv and "--log_samples" in argv and "--limit" not in argv
    model_args = dict(kv.split("=", 1) for kv in argv[argv.index("--model_args") + 1].split(","))
    assert model_args == {"model": "m", "base_url": "http://h:1/v1/chat/completions", "api_key": "EMPTY",
                          "max_retries": "5", "num_concurrent": "48", "timeout": "1800",
                          "tokenized_requests": "False", "max_length": "131072"}
    assert argv[argv.index("--gen_kwargs") + 1] == "max_tokens=16384,temperature=0,top_p=1"


@pytest.mark.parametrize("ctx,expected", [(131072, 16384), (16384, 12288), (8192, 4096), (4096, 2048)])
def test_generation_budget(ctx, expected):
    assert lmeval_client.max_gen_tokens(ctx) == expected


def test_lm_eval_needs_no_torch():
    """The pinned lm-eval and its `api` extra require no torch (only its `hf`/`vllm`/... extras do)."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    needed = []
    for text in requires("lm_eval") or []:
        req = Requirement(text)
        if req.marker is None or req.marker.evaluate({"extra": "api"}):
            needed.append(req.name.lower())
    assert "aiohttp" in needed and "datasets" in needed
    assert not {"torch", "accelerate", "peft", "vllm"} & set(needed)


def test_progress_from_lm_evals_own_progress_bar(tmp_path):
    real = (Path(__file__).parents[1] / "fixtures" / "evals" / "lm_eval_progress.log").read_bytes()
    log = tmp_path / "lm_eval.log"
    assert lmeval_client.progress(log) is None
    log.write_bytes(b"2026 INFO [evaluator:589] Running generate_until requests\n")
    assert lmeval_client.progress(log) is None
    log.write_bytes(real)
    assert lmeval_client.progress(log) == (20, 20)
    cut = real.index(b"14/20")
    log.write_bytes(real[: cut + 5])                    # a log still being written
    assert lmeval_client.progress(log) == (14, 20)

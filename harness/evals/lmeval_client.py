"""The lm-eval client: the exact `python -m lm_eval` command of an eval, and reading what it wrote.

lm-eval (pinned, installed with the harness, no torch) runs as a subprocess with its
`local-chat-completions` model against the server's `/v1/chat/completions`: the chat template applied by
the server (`--apply_chat_template`), greedy decoding (temperature 0, top_p 1), `max_tokens` bounded by
the served context, `num_concurrent` = the point's concurrency, retries, no tokenizer
(`tokenized_requests=False`). It runs offline: the task reads the shipped data files (its directory is
the working directory) and the Hugging Face libraries are told not to reach the hub.
"""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from pathlib import Path
from typing import Any

from harness.point.servers.server_auth import auth_headers

TASK_DIRS = {"gsm8k": Path(__file__).with_name("gsm8k")}
MAX_RETRIES = 5
REQUEST_TIMEOUT_S = 1800
MAX_GEN_TOKENS = 16384
PROMPT_RESERVE_TOKENS = 4096   # room left for the 5-shot prompt when the generation budget is taken


def task_file(task: str) -> Path:
    return TASK_DIRS[task] / f"{task}.yaml"


def test_split_size(task: str) -> int:
    """How many problems the task's shipped test split holds (GSM8K: 1,319)."""
    with open(TASK_DIRS[task] / "test.jsonl", "rb") as fh:
        return sum(1 for line in fh if line.strip())


def max_gen_tokens(context_length: int) -> int:
    """The generation budget: the context less room for the prompt, at most 16,384 tokens
    (half the context when it is too small to reserve 4,096 prompt tokens)."""
    if context_length > 2 * PROMPT_RESERVE_TOKENS:
        return min(MAX_GEN_TOKENS, context_length - PROMPT_RESERVE_TOKENS)
    return max(1, context_length // 2)


def served_context_length(base_url: str, timeout: float = 10.0, api_key: str | None = None) -> int | None:
    """`max_model_len` of the served model from `/v1/models` (SGLang and the simulator report it), asked with
    the server's API key where it has one. lm-eval itself takes the key from `OPENAI_API_KEY`."""

    try:
        request = urllib.request.Request(f"{base_url}/v1/models", headers=auth_headers(api_key))
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            cards = json.loads(resp.read()).get("data") or []
    except (OSError, ValueError):
        return None
    for card in cards:
        value = card.get("max_model_len") if isinstance(card, dict) else None
        if isinstance(value, int) and value > 0:
            return value
    return None


def build_argv(*, task: str, model: str, base_url: str, conc: int, context_length: int,
               output_dir: Path, limit: int | None) -> list[str]:
    """The exact lm-eval command (run with the task's directory as the working directory)."""
    model_args = ",".join([
        f"model={model}",
        f"base_url={base_url}/v1/chat/completions",
        "api_key=EMPTY",
        f"max_retries={MAX_RETRIES}",
        f"num_concurrent={conc}",
        f"timeout={REQUEST_TIMEOUT_S}",
        "tokenized_requests=False",
        f"max_length={context_length}",
    ])
    argv = [sys.executable, "-m", "lm_eval",
            "--model", "local-chat-completions",
            "--apply_chat_template",
            "--tasks", str(task_file(task)),
            "--model_args", model_args,
            "--gen_kwargs", f"max_tokens={max_gen_tokens(context_length)},temperature=0,top_p=1",
            "--output_path", str(output_dir),
            "--log_samples"]
    if limit is not None:
        argv += ["--limit", str(limit)]
    return argv


def build_env(cache_dir: Path) -> dict[str, str]:
    """Offline: no hub for datasets, models or tokenizers; caches under the run's cache directory."""
    hf = cache_dir / "hf"
    return {
        "HF_HOME": str(hf),
        "HF_DATASETS_CACHE": str(hf / "datasets"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "TOKENIZERS_PARALLELISM": "false",
        "PYTHONUNBUFFERED": "1",
    }


def find_results(output_dir: Path) -> tuple[Path, Path | None] | None:
    """The newest `results_*.json` lm-eval wrote under `output_dir`, and its `samples_*.jsonl`."""
    found = sorted(Path(output_dir).glob("**/results_*.json"))
    if not found:
        return None
    results = found[-1]
    stamp = results.stem.removeprefix("results_")
    samples = sorted(results.parent.glob(f"samples_*_{stamp}.jsonl"))
    return results, (samples[-1] if samples else None)


def read_results(path: Path) -> dict[str, Any]:
    with open(path) as fh:
        data: dict[str, Any] = json.load(fh)
    return data


_PROGRESS = re.compile(rb"Requesting API:\s*\d+%\|[^|]*\|\s*(\d+)/(\d+)")


def progress(log_path: Path) -> tuple[int, int] | None:
    """(requests answered, requests in all) from the newest progress bar in lm-eval's log, if any yet."""
    try:
        with open(log_path, "rb") as fh:
            fh.seek(max(0, fh.seek(0, 2) - 8192))
            tail = fh.read()
    except OSError:
        return None
    found = _PROGRESS.findall(tail)
    return (int(found[-1][0]), int(found[-1][1])) if found else None


def last_error(log_path: Path) -> str:
    """The last traceback line or ERROR line of lm-eval's log, for a one-line failure reason."""
    try:
        lines = [ln for ln in log_path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return "no lm-eval log"
    for ln in reversed(lines):
        if "Error" in ln or "ERROR" in ln or "Exception" in ln:
            return ln.strip()[:300]
    return lines[-1].strip()[:300] if lines else "lm-eval wrote nothing"

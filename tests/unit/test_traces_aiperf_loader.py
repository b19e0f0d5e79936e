"""AIPerf 0.13's own Weka loader reads the shipped demo corpus and rebuilds every request.

Runs the loader in a child process: its settings are read from the environment at import time, and
the serial reconstruction path (AIPERF_DATASET_WEKA_PARALLEL_WORKERS=1) keeps it to one core and
lets it use the harness's tokenizer directory directly.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.traces import corpus_stats, load_corpus

ROOT = Path(__file__).parents[2]
QUICKSTART = ROOT / "recipes" / "traces" / "quickstart"

SCRIPT = r"""
import json, sys
from aiperf.common import random_generator as rng
from aiperf.common.tokenizer import Tokenizer
from aiperf.config import BenchmarkConfig, BenchmarkRun
from aiperf.dataset.generator.prompt import PromptGenerator
from aiperf.dataset.loader.weka_trace import WekaTraceLoader

path, tok = sys.argv[1], sys.argv[2]
cfg = BenchmarkConfig.model_validate({
    "models": ["demo"],
    "endpoint": {"urls": ["http://127.0.0.1:9/v1/chat/completions"], "wait_for_model_timeout": 0},
    "datasets": [{"name": "default", "type": "file", "path": path, "format": "weka_trace"}],
    "phases": [{"name": "profiling", "type": "concurrency", "requests": 10, "concurrency": 2}],
    "runtime": {"ui": "simple"},
})
run = BenchmarkRun(benchmark_id="t", cfg=cfg, trial=0, artifact_dir="/tmp/unused", random_seed=1, variables={})
rng.init(42)
pg = PromptGenerator(prompts=None, prefix_prompts=None, tokenizer=Tokenizer.from_pretrained(tok))
loader = WekaTraceLoader(filename=path, run=run, prompt_generator=pg)
convs = loader.convert_to_conversations(loader.load_dataset())
turns = [t for c in convs for t in c.turns]
print(json.dumps({"conversations": len(convs), "turns": len(turns),
                  "hit": sum(t.theoretical_prefix_cache_hit_blocks for t in turns),
                  "total": sum(t.theoretical_prefix_cache_total_blocks for t in turns)}))
"""


@pytest.mark.slow
def test_aiperf_weka_loader_reads_demo_corpus() -> None:
    env = {**os.environ, "AIPERF_DATASET_WEKA_PARALLEL_WORKERS": "1"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(QUICKSTART), str(ROOT / "harness/tokenizer/demo")],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    stats = corpus_stats(load_corpus(QUICKSTART))
    assert got["conversations"] == stats["traces"] + stats["subagents"]
    assert got["turns"] == stats["requests"]
    assert (got["hit"], got["total"]) == (stats["theoretical_prefix_cache_hit"]["hit_blocks"],
                                          stats["theoretical_prefix_cache_hit"]["total_blocks"])

"""The shipped demo tokenizer: rebuilt from AIPerf's coding corpus it is byte-identical, and on the text AIPerf's
trace replay fills hash blocks with, a token is about the 4 bytes the simulator counts, so a simulated run's
prompts are about the trace's sizes."""

from __future__ import annotations

import random
from pathlib import Path

from harness.sim.batching.prompt import BYTES_PER_TOKEN
from harness.tokenizer import DEMO_TOKENIZER_DIR
from harness.tokenizer.build import build, coding_corpus


def test_the_shipped_files_are_what_the_build_makes(tmp_path: Path) -> None:
    build(tmp_path)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        assert (tmp_path / name).read_bytes() == (DEMO_TOKENIZER_DIR / name).read_bytes(), name


def test_a_hash_block_of_coding_text_is_about_the_simulators_bytes_per_token() -> None:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(DEMO_TOKENIZER_DIR / "tokenizer.json"))
    text = coding_corpus(seed=11)            # not the training text: another draw of AIPerf's generator
    ids = tok.encode(text).ids
    assert 0.9 * BYTES_PER_TOKEN <= len(text.encode()) / len(ids) <= 1.15 * BYTES_PER_TOKEN
    rng = random.Random(0)
    starts = [rng.randrange(len(ids) - 64) for _ in range(400)]   # AIPerf's blocks: 64-token slices of the pool
    block_bytes = sum(len(tok.decode(ids[s:s + 64]).encode()) for s in starts) / len(starts)
    assert 0.9 * BYTES_PER_TOKEN <= block_bytes / 64 <= 1.15 * BYTES_PER_TOKEN

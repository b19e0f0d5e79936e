"""Rebuild the small offline tokenizer shipped with the harness (`python -m harness.tokenizer.build`).

AIPerf needs a Hugging Face tokenizer to synthesize prompt text from trace hash blocks. Clusters use the
model's own tokenizer files; machines without hub access (laptops, CI) use this one: a byte-level BPE trained on
the text AIPerf's trace replay samples prompts from. Its Weka/AgentX trace loader fills every hash block from
AIPerf's coding corpus (`aiperf.dataset.generator.coding_content.CodingContentGenerator`: code, shell output,
JSON, diffs, tracebacks), so the training text is that corpus exactly as AIPerf builds it (its own generator,
seed 0), and every build from the same AIPerf gives the same files. The vocabulary size is chosen so that a
token is about 4 bytes of that text, as the simulator counts tokens (`harness.sim.batching.prompt`): a trace
request of N tokens then reaches the simulator as about N tokens. (A tokenizer trained on AIPerf's other
corpus, Shakespeare, made about 1.7-byte tokens of coding text, and prompts of about 43 % of the trace's size.)
Servers report token counts in `usage` and AIPerf runs with `--use-server-token-count`, so this tokenizer
shapes prompt text, never the measured token counts.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.artifacts import write_bytes

HERE = Path(__file__).parent
FILES_DIR = HERE / "demo"
# Merges across whitespace (no pre-tokenizer regex) with this many tokens give about 4.2 bytes per token on
# coding text AIPerf generates with another seed (2,304: 3.9; 2,816: 4.4).
VOCAB_SIZE = 2560


class _TextRecorder:
    """A stand-in tokenizer that keeps the text AIPerf's generator asks it to encode."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def encode(self, text: str, **kwargs: object) -> list[int]:
        self.texts.append(text)
        return [0]

    def decode(self, ids: list[int], **kwargs: object) -> str:
        return ""


def coding_corpus(seed: int = 0) -> str:
    """The text AIPerf's coding corpus generator tokenizes into the pool its trace replay samples blocks from."""
    from aiperf.common import random_generator
    from aiperf.config.dataset.content import PromptConfig
    from aiperf.dataset.generator.coding_content import CodingContentGenerator

    recorder = _TextRecorder()
    random_generator.reset()
    random_generator.init(seed)
    try:
        CodingContentGenerator(config=PromptConfig(), tokenizer=recorder)
    finally:
        random_generator.reset()
    return recorder.texts[0]


def build(out_dir: Path = FILES_DIR) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=["<|endoftext|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(coding_corpus().split("\n\n"), trainer=trainer)
    out_dir.mkdir(parents=True, exist_ok=True)
    tok.save(str(out_dir / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 1048576,
              "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}
    write_bytes(out_dir / "tokenizer_config.json", (json.dumps(config, indent=2) + "\n").encode())
    write_bytes(out_dir / "special_tokens_map.json", (json.dumps(
        {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}, indent=2)
        + "\n").encode())
    return out_dir


if __name__ == "__main__":
    print(build())

"""Rebuild the small offline tokenizer shipped with the harness (`python -m harness.tokenizer.build`).

AIPerf needs a Hugging Face tokenizer to synthesize prompt text from trace hash blocks. Clusters use the
model's own tokenizer files; machines without hub access (laptops, CI) use this one: a byte-level BPE with an
8,192-token vocabulary trained on AIPerf's own prompt-synthesis corpus (`aiperf/dataset/generator/assets/
shakespeare.txt`, the text it samples prompts from), so every build from the same AIPerf gives the same files.
On that text a token is about 4 bytes, as the simulator counts tokens (`harness.sim.batching.prompt`), so a
trace request of N tokens reaches the simulator as about N tokens (a smaller vocabulary made ~1.1-byte tokens
and prompts a quarter of the trace's size). Servers report token counts in `usage` and AIPerf runs with
`--use-server-token-count`, so this tokenizer shapes prompt text, never the measured token counts.
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
FILES_DIR = HERE / "demo"
VOCAB_SIZE = 8192


def _corpus() -> list[str]:
    """The lines of AIPerf's prompt-synthesis corpus."""
    import aiperf.dataset.generator.prompt as prompt

    path = Path(prompt.__file__).parent / str(prompt.DEFAULT_CORPUS_FILE)
    return path.read_text(encoding="utf-8").splitlines()


def build(out_dir: Path = FILES_DIR) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=["<|endoftext|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_corpus(), trainer=trainer)
    out_dir.mkdir(parents=True, exist_ok=True)
    tok.save(str(out_dir / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 1048576,
              "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}
    (out_dir / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    (out_dir / "special_tokens_map.json").write_text(json.dumps(
        {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>"}, indent=2) + "\n")
    return out_dir


if __name__ == "__main__":
    print(build())

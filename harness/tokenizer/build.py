"""Rebuild the small offline tokenizer shipped with the harness (`python -m harness.tokenizer.build`).

AIPerf needs a Hugging Face tokenizer to synthesize prompt text from trace hash blocks. Clusters use the
model's own tokenizer files; machines without hub access (laptops, CI) use this one: a byte-level BPE with a
4,096-token vocabulary trained on a deterministic word list, so every build gives the same files. Servers
report token counts in `usage` and AIPerf runs with `--use-server-token-count`, so this tokenizer shapes
prompt text only, never the measured token counts.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).parent
FILES_DIR = HERE / "demo"
VOCAB_SIZE = 4096


def _corpus(seed: int = 0, lines: int = 4000) -> list[str]:
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ten", "ra", "su", "vo", "pel", "dri", "an", "os", "qu", "ex", "ly", "ing",
                 "ed", "tion", "co", "de", "re", "fn", "var", "def", "int", "str", "self", "cls", "ret"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))) for _ in range(3000)]
    punct = [" ", " ", " ", ", ", ". ", "(", ")", ": ", "\n", " = ", "_", "/"]
    return ["".join(rng.choice(words) + rng.choice(punct) for _ in range(30)) for _ in range(lines)]


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

"""Build the tiny random-weight Llama that the real-SGLang CPU tier serves, offline and deterministically.

    python tools/sglang_cpu/tiny_model.py OUT_DIR        # run with the SGLang venv's interpreter

It writes a Hugging Face checkpoint: a `LlamaForCausalLM` (hidden 128, 2 layers, 4 heads, ~1.3M parameters,
bf16, random weights from a fixed seed) saved with `save_pretrained`, and a byte-level BPE tokenizer trained
locally with the `tokenizers` library on a generated word list, saved as a fast HF tokenizer with a ChatML chat
template (`<|im_start|>role ... <|im_end|>`). Nothing is downloaded. Greedy decoding ends a reply at once (see
`_end_turns_under_greedy`), so an eval's problems take a token each; sampled decoding is near uniform. The model's answers are noise: it exists
to exercise SGLang's server, scheduler, model code and HTTP/metrics contract, not to score on anything.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

VOCAB_SIZE = 2048
CONTEXT = 8192
SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def _corpus(seed: int = 0, lines: int = 3000) -> list[str]:
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ten", "ra", "su", "vo", "pel", "dri", "an", "os", "qu", "ex", "ly", "ing",
                 "ed", "tion", "co", "de", "re", "fn", "var", "def", "int", "str", "self", "ret", "the", "is"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))) for _ in range(2000)]
    words += [str(n) for n in range(100)]
    punct = [" ", " ", " ", ", ", ". ", "(", ")", ": ", "\n", " = ", "_", "/", "? "]
    return ["".join(rng.choice(words) + rng.choice(punct) for _ in range(30)) for _ in range(lines)]


def build_tokenizer(out: Path) -> int:
    """Train and save the tokenizer; returns its vocabulary size."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIAL, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(_corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|im_end|>",
                                   pad_token="<|endoftext|>", unk_token="<|endoftext|>",
                                   model_max_length=CONTEXT)
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(str(out))
    return int(tok.get_vocab_size())


def build_model(out: Path, vocab: int) -> None:
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=vocab, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=CONTEXT,
                         bos_token_id=0, eos_token_id=2, pad_token_id=0, tie_word_embeddings=False,
                         torch_dtype="bfloat16")
    model = LlamaForCausalLM(config)
    _end_turns_under_greedy(model, eos=2)
    model = model.to(torch.bfloat16)
    model.generation_config = GenerationConfig(bos_token_id=0, eos_token_id=2, pad_token_id=0)
    model.save_pretrained(str(out))


def _end_turns_under_greedy(model: Any, eos: int) -> None:
    """Make greedy decoding end a reply at once, sampling stay near uniform: every embedding gets a constant
    component in dimension 0 (so the final hidden state always points that way), the output rows ignore that
    dimension except the end-of-turn row, which reads it. Its logit is then ~1 while the others stay ~N(0, 0.05):
    greedy (temperature 0, as lm-eval asks) picks `<|im_end|>` first, so an eval of a few problems takes seconds;
    sampled requests (AIPerf, `ignore_eos`) see a nearly flat distribution and run their full length."""
    import torch

    with torch.no_grad():
        model.model.embed_tokens.weight[:, 0] = 1.0
        head = model.lm_head.weight
        head[:, 0] = 0.0
        head[eos, 0] = 1.0 / 11.0   # the normalized hidden state's dimension 0 is ~11


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    vocab = build_tokenizer(out)
    build_model(out, vocab)
    (out / "harness_tiny_model.json").write_text(json.dumps(
        {"builder": "tools/sglang_cpu/tiny_model.py", "architecture": "LlamaForCausalLM", "weights": "random",
         "vocab_size": vocab, "context": CONTEXT}, indent=1) + "\n")
    print(f"tiny model written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

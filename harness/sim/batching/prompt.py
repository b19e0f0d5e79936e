"""Deterministic token accounting for chat requests (the simulator has no tokenizer).

A chat request is rendered with a fixed chat template (`<|role|>\\n` + text + `\\n` per message,
then `<|assistant|>\\n`); the prompt length is `ceil(utf8_bytes / BYTES_PER_TOKEN)`, about what a
BPE tokenizer gives for English and code. The rendered bytes are cut into content blocks of
`BLOCK_TOKENS` tokens; each full block gets a chained hash (hash of the previous block's hash and
its own bytes), so two prompts share a block exactly when they share the whole prefix up to and
including it. The prefix cache works on these blocks.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

BYTES_PER_TOKEN = 4
BLOCK_TOKENS = 64
BLOCK_BYTES = BYTES_PER_TOKEN * BLOCK_TOKENS

# The words streamed back as output, one per token (real-draft-token text is semi-coherent).
_WORDS = ["", "the", "sim", "ulated", "model", "streams", "tokens", "at", "the", "pace", "of", "its", "step", "engine", "and", "every", "word", "here", "is", "one", "token", "of", "output", "for", "the", "benchmark", "client", "to", "count", "and", "time", "carefully"][1:]
WORDS = tuple(" " + w for w in _WORDS)


@dataclass(frozen=True)
class Prompt:
    tokens: int
    block_hashes: tuple[bytes, ...]
    digest: int


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                else:
                    parts.append(json.dumps(part, sort_keys=True))
            else:
                parts.append(str(part))
        return "".join(parts)
    return json.dumps(content, sort_keys=True)


def render_chat(messages: list[Any], tools: Any = None) -> bytes:
    """The prompt bytes of a chat request under the simulator's fixed chat template."""
    out: list[str] = []
    if tools:
        out.append("<|tools|>\n" + json.dumps(tools, sort_keys=True) + "\n")
    for msg in messages:
        if not isinstance(msg, dict):
            continue
        role = str(msg.get("role", "user"))
        text = _text_of(msg.get("content"))
        if msg.get("tool_calls"):
            text += json.dumps(msg["tool_calls"], sort_keys=True)
        out.append(f"<|{role}|>\n{text}\n")
    out.append("<|assistant|>\n")
    return "".join(out).encode("utf-8")


def count_tokens(data: bytes) -> int:
    """Prompt length in tokens: ceil(bytes / BYTES_PER_TOKEN), at least 1."""
    return max(1, -(-len(data) // BYTES_PER_TOKEN))


def analyse(data: bytes) -> Prompt:
    """Token count, chained hashes of the full content blocks, and a digest of the whole prompt."""
    hashes: list[bytes] = []
    prev = b""
    full = len(data) // BLOCK_BYTES
    for i in range(full):
        prev = hashlib.blake2b(prev + data[i * BLOCK_BYTES : (i + 1) * BLOCK_BYTES], digest_size=12).digest()
        hashes.append(prev)
    digest = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")
    return Prompt(tokens=count_tokens(data), block_hashes=tuple(hashes), digest=digest)


def natural_length(digest: int, lo: int = 16, hi: int = 512) -> int:
    """Output length when the model stops on its own (no ignore_eos): a deterministic function of the prompt."""
    return lo + digest % (hi - lo + 1)


def output_text(start: int, count: int) -> str:
    """Text of output tokens [start, start + count): one word per token."""
    n = len(WORDS)
    return "".join(WORDS[(start + i) % n] for i in range(count))

"""The one embedder every system shares, and the on-disk cache of LoCoMo's vectors.

`local` is recallery's all-MiniLM-L6-v2 ONNX embedder (`recallery.providers.local`). `hash` is
a deterministic bag-of-words hashing embedder for smoke tests of the plumbing only: its recall
means nothing. Vectors are cached in `benchmarks/.cache/` under a hash of the model id and the
texts, so every peer (and every run) gets byte-identical vectors; `PEERS_CACHE_DIR` moves the
cache (tests point it at a temporary folder).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from benchmarks.peers.base import DIM
from benchmarks.quality.locomo import Conversation, turn_text

CACHE_DIR = Path(
    os.environ.get("PEERS_CACHE_DIR") or Path(__file__).resolve().parent.parent / ".cache"
)
BATCH = 256


class Embedder(Protocol):
    @property
    def model_id(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]: ...


class HashEmbedder:
    """Deterministic hashed bag of words, unit rows; for smoke tests only."""

    model_id = "test-hash-bow-384"
    dimension = DIM

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"[a-z0-9]+", text.lower()):
                digest = hashlib.blake2b(token.encode(), digest_size=4).digest()
                out[row, int.from_bytes(digest, "little") % DIM] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return (out / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def make_embedder(kind: str) -> Embedder:
    """`local` (recallery's ONNX MiniLM) or `hash` (smoke tests)."""
    if kind == "hash":
        return HashEmbedder()
    if kind == "local":
        from recallery.providers.local import LocalEmbedder  # only the peers' process has it

        embedder: Embedder = LocalEmbedder()
        return embedder
    raise ValueError(f"unknown embedder {kind!r} (use 'local' or 'hash')")


def locomo_texts(conversations: Sequence[Conversation]) -> list[str]:
    """Every text any system embeds: each turn's `turn_text` and each question, de-duplicated."""
    texts = [turn_text(t) for c in conversations for t in c.turns]
    texts += [q.question for c in conversations for q in c.questions]
    return list(dict.fromkeys(texts))


def model_key(embedder: Embedder) -> str:
    """The model id, plus the weights' sha256 where the embedder's module pins one."""
    module = sys.modules.get(type(embedder).__module__)
    return f"{embedder.model_id}:{getattr(module, 'ONNX_SHA256', '')}"


def cache_path(model_key: str, texts: Sequence[str], cache_dir: Path = CACHE_DIR) -> Path:
    digest = hashlib.sha256(model_key.encode())
    for text in texts:
        digest.update(b"\x00" + text.encode())
    return cache_dir / f"locomo-vectors-{digest.hexdigest()[:16]}.npy"


def embed_all(embedder: Embedder, texts: Sequence[str]) -> NDArray[np.float32]:
    parts = [embedder.embed(list(texts[i : i + BATCH])) for i in range(0, len(texts), BATCH)]
    return np.concatenate(parts).astype(np.float32, copy=False)


def cached_vectors(
    embedder: Embedder, texts: Sequence[str], cache_dir: Path = CACHE_DIR
) -> dict[str, NDArray[np.float32]]:
    """Text -> vector, embedding and saving the whole list once per model and text set."""
    path = cache_path(model_key(embedder), texts, cache_dir)
    if path.exists():
        vectors = np.load(path)
    else:
        vectors = embed_all(embedder, texts)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, vectors)
        tmp.replace(path)
    if vectors.shape != (len(texts), DIM):
        raise ValueError(f"{path} holds {vectors.shape}, expected ({len(texts)}, {DIM})")
    return dict(zip(texts, vectors, strict=True))

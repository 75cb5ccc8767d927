"""A disk cache of sentence vectors for the benchmarks (a model's vectors of a text never change).

``CachedEmbeddings(inner, folder)`` wraps any LangChain ``Embeddings``; vectors are kept per model in
``folder/<model>.npz`` and only texts not seen before are embedded. ``cached(inner, folder)`` does the same under
the inner model's class name, so ``IntentionMemory`` names the model as it names ``inner`` (and so uses the
thresholds shipped for it). Benchmark-only: not part of promptcache.
"""

from __future__ import annotations

import atexit
import hashlib
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

CHUNK = 128
"""Texts embedded between two saves of the cache."""


class CachedEmbeddings(Embeddings):
    def __init__(self, inner: Any, folder: str | Path) -> None:
        self.inner = inner
        self.model = getattr(inner, "model", type(inner).__name__)
        self.path = Path(folder) / (hashlib.sha256(str(self.model).encode()).hexdigest()[:16] + ".npz")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.vectors: dict[str, list[float]] = {}
        self._unsaved = 0
        atexit.register(self.save)
        if self.path.exists():
            data = np.load(self.path, allow_pickle=False)
            self.vectors = dict(zip(data["texts"].tolist(), data["vectors"].tolist()))

    def save(self) -> None:
        if not self._unsaved:
            return
        self._unsaved = 0
        texts = list(self.vectors)
        np.savez(self.path, texts=np.array(texts), vectors=np.array([self.vectors[t] for t in texts], dtype=np.float32))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        # Texts of similar length batched together (less padding), saved every chunk (a long run can be resumed).
        todo = sorted({t for t in texts if t not in self.vectors}, key=lambda t: (len(t), t))
        for start in range(0, len(todo), CHUNK):
            chunk = todo[start : start + CHUNK]
            for t, v in zip(chunk, self.inner.embed_documents(chunk)):
                self.vectors[t] = v
            self._unsaved += len(chunk)
            if self._unsaved >= CHUNK:
                self.save()
        return [list(self.vectors[t]) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def cached(inner: Any, folder: str | Path) -> CachedEmbeddings:
    """``CachedEmbeddings(inner, folder)`` as an instance of a subclass named like ``inner``'s class: an
    ``IntentionMemory`` built on it names the model (``embeddings:<class>:<model>``) as it names ``inner``."""
    kind = type(type(inner).__name__, (CachedEmbeddings,), {})
    return kind(inner, folder)  # type: ignore[no-any-return]

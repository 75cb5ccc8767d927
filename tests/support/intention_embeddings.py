"""Scripted ``Embeddings`` and a normal-form switch shared by the intention-cache tests."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import pytest
from langchain_core.embeddings import Embeddings

from promptcache.intention import _meaning


def unit(angle_deg: float) -> list[float]:
    """A unit vector in the x-y plane at ``angle_deg`` degrees: its cosine to ``unit(0)`` is ``cos(angle)``."""
    a = math.radians(angle_deg)
    return [math.cos(a), math.sin(a), 0.0]


# Word vectors for the word check: "parasol" stands in for "umbrella" (no synonym list joins them, so only the
# embeddings can accept the match).
WORDS = {"umbrella": unit(0), "parasol": unit(0), "advice": [0.0, 0.0, 1.0], "report": [0.0, 0.0, 1.0]}


class Table(Embeddings):
    """Sentence vectors from ``sentences``, then word vectors from ``words``; anything else ``[0, 0, 1]``."""

    def __init__(self, sentences: dict[str, list[float]], words: dict[str, list[float]] | None = None) -> None:
        self.sentences = sentences
        self.words = WORDS if words is None else words

    def _vec(self, text: str) -> list[float]:
        return self.sentences.get(text) or self.words.get(text) or [0.0, 0.0, 1.0]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


class SameVector(Embeddings):
    """Every text gets the same vector: cosine 1.0 for every pair, so only the exact key and the vetoes decide."""

    model = "same-vector"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0, 0.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0, 0.0]


def older_normal_form(monkeypatch: pytest.MonkeyPatch, version: str) -> Iterator[Callable[[bool], None]]:
    """A fixture body: signatures written as normal-form ``version`` wrote them; the yielded ``use(False)`` brings
    back the current rules (restored at the end either way)."""
    current = _meaning.NORMAL_FORM_VERSION

    def use(old: bool) -> None:
        monkeypatch.setattr(_meaning, "NORMAL_FORM_VERSION", version if old else current)
        _meaning._signature.cache_clear()

    use(True)
    yield use
    use(False)

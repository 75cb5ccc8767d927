"""The word check of a similar match: every content word one intention has and the other lacks must be matched by
a near-synonym on the other side.

Content words are the words outside the veto lists' fillers and pronouns (``data/vetoes.json``), compared by
their Snowball stems, so inflection ("cards"/"card") is no difference. A word one side lacks is accepted only when
the other side holds a word whose embedding (the memory's own ``Embeddings``, one word at a time) has cosine at
least ``word_threshold`` with it ("search" for "find", "tmrw" for "tomorrow"); an added or replaced word with no
such partner ("weather alerts" vs "weather", "open" vs "closed") blocks the match. The word threshold is measured
on the package's calibration pairs (bench/README.md, "Intention cache").
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

from promptcache.intention._vetoes import _data, _words
from promptcache.intention._vocabulary import stem

__all__ = ["DEFAULT_WORD_THRESHOLD", "WordCheck", "content_stems"]

DEFAULT_WORD_THRESHOLD = 0.7
"""Least cosine of a word and its stand-in on the other side (all-MiniLM-L6-v2 scale)."""
SHORT_INTENTION_WORDS = 6
"""The check applies when a side has at most this many content words: in a short intention one word is much of
what is asked; long texts (a paragraph, a rewritten question) are left to the sentence similarity."""


@lru_cache(maxsize=65536)
def content_stems(text: str) -> dict[str, str]:
    """Stem -> the first surface word with that stem, for the content words of ``text``."""
    data = _data()
    out: dict[str, str] = {}
    for w in _words(text):
        low = w.casefold()
        if low in data["fillers"] or low in data["persons"]:
            continue
        out.setdefault(stem(low), low)
    return out


class WordCheck:
    """The word check over an ``Embeddings`` (word vectors cached per process, thread-safe).

    Args:
        embeddings: a LangChain ``Embeddings``. word_threshold: in ``[0, 1]``.
    """

    def __init__(self, embeddings: Any, word_threshold: float = DEFAULT_WORD_THRESHOLD) -> None:
        self.embeddings = embeddings
        self.word_threshold = word_threshold
        self._vectors: dict[str, Any] = {}
        self._lock = threading.Lock()

    def _vecs(self, words: list[str]) -> dict[str, Any]:
        import numpy as np

        with self._lock:
            todo = sorted({w for w in words if w not in self._vectors})
        if todo:
            got = np.asarray(self.embeddings.embed_documents(todo), dtype=np.float32)
            got /= np.maximum(np.linalg.norm(got, axis=1, keepdims=True), 1e-12)
            with self._lock:
                self._vectors.update(zip(todo, got))
        with self._lock:
            return {w: self._vectors[w] for w in words}

    def prepare(self, words: list[str]) -> None:
        """Embeds the ``words`` not yet known in one ``embed_documents`` call (e.g. every word a set of labelled
        pairs will compare), so later checks embed nothing."""
        if words:
            self._vecs(words)

    def missing(self, query: str, stored: str) -> list[str]:
        """The words of either side that have no partner on the other (empty: the check passes)."""
        a, b = content_stems(query), content_stems(stored)
        if min(len(a), len(b)) > SHORT_INTENTION_WORDS:
            return []
        only_a = [a[s] for s in a if s not in b]
        only_b = [b[s] for s in b if s not in a]
        if not only_a and not only_b:
            return []
        vecs = self._vecs(list(a.values()) + list(b.values()))
        out = []
        for lonely, other in ((only_a, list(b.values())), (only_b, list(a.values()))):
            for w in lonely:
                if not other or max(float(vecs[w] @ vecs[o]) for o in other) < self.word_threshold:
                    out.append(w)
        return out

    def passes(self, query: str, stored: str) -> bool:
        """Whether the two differ in content words and every unshared one has a near-synonym on the other side. Two
        intentions with the same content words differ only in order and function words: the lexical normal form
        (`promptcache.intention._meaning`) judges those, and word order can change who does what."""
        if content_stems(query).keys() == content_stems(stored).keys():
            return False
        return not self.missing(query, stored)

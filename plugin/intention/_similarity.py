"""Similarity between intentions: the model-free default (`LexicalSimilarity`) and any LangChain ``Embeddings``.

Scale: every similarity here is a number in ``[0, 1]``, higher is closer; ``1.0`` means the same features.

A `Similarity` turns texts into *features* once, when a memory is stored (kept with the memory, JSON-safe),
and compares a query's features with the stored ones at lookup. So a lookup over 1,000 memories encodes one text
(the query), not 1,000.
"""

from __future__ import annotations

import base64
import math
from abc import ABC, abstractmethod
from array import array
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, cast

from promptcache._types import JSONValue
from promptcache.intention._normalize import tokens

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from langchain_core.embeddings import Embeddings

try:  # optional: vectorised scoring of many candidates (a dependency of matplotlib, so normally present)
    import numpy as _np
except ImportError:  # pragma: no cover - exercised only without numpy
    _np = None  # type: ignore[assignment]  # the module or None: every use checks `_np is None` first

__all__ = ["EmbeddingsSimilarity", "LexicalSimilarity", "Similarity", "as_similarity"]


class Similarity(ABC):
    """Turns intentions into features and scores them (``[0, 1]``, higher is closer).

    Attributes:
        name: identifies the feature format; memories stored under another name are re-encoded at lookup.
    """

    name: str = "similarity"
    stored_features: bool = True
    """Whether `encode` gives features worth storing (False: they are recomputed from the text)."""

    @abstractmethod
    def encode(self, texts: Sequence[str]) -> list[JSONValue]:
        """Features of stored intentions (JSON-serialisable values), one per text."""

    def encode_query(self, text: str) -> JSONValue:
        """Features of a looked-up intention (default: as a stored one)."""
        return self.encode([text])[0]

    @abstractmethod
    def scores(self, query: object, candidates: Sequence[object]) -> list[float]:
        """Similarity of ``query`` features to each of ``candidates``' features, each in ``[0, 1]``."""

    async def aencode(self, texts: Sequence[str]) -> list[JSONValue]:
        """Async `encode` (default: the sync one)."""
        return self.encode(texts)

    def prepare(self, candidates: Sequence[object]) -> object:
        """An opaque, reusable form of ``candidates`` for `above` (default: the list itself).

        ``candidates`` are what `scores` takes. A memory prepares a user's candidates once and reuses the
        result until the user's memories change.
        """
        return list(candidates)

    def above(self, query: object, prepared: object, floor: float) -> list[tuple[int, float]]:
        """``(index, score)`` of the prepared candidates scoring at least ``floor`` (any order)."""
        return [(i, s) for i, s in enumerate(self.scores(query, cast("Sequence[object]", prepared))) if s >= floor]

    async def aencode_query(self, text: str) -> JSONValue:
        """Async `encode_query` (default: the sync one)."""
        return self.encode_query(text)


@lru_cache(maxsize=65536)
def _lexical_features(text: str, ngram: int) -> frozenset[str]:
    feats: set[str] = set()
    for word in tokens(text):
        feats.add(word)
        padded = f"<{word}>"
        if len(padded) > ngram:
            feats.update(padded[i : i + ngram] for i in range(len(padded) - ngram + 1))
    return frozenset(feats)


class LexicalSimilarity(Similarity):
    """The default, model-free similarity: cosine (Ochiai) overlap of word and character n-gram sets.

    Features of a text: its case-folded words plus the character ``ngram``-grams of each word padded with ``<``/``>``
    (so "card"/"cards" or "arrive"/"arrived" share most features). Score: ``|A & B| / sqrt(|A| * |B|)``. Chosen by
    measurement on Banking77 (bench/intention.py; bench/README.md, "Intention cache"), where it gave the best
    precision at every hit rate among word-set Jaccard, content-word Jaccard and n-gram Jaccard/cosine.

    Args:
        ngram: character n-gram length (default 3, an int >= 2).

    Raises:
        ValueError: ``ngram`` < 2.
    """

    def __init__(self, ngram: int = 3) -> None:
        if isinstance(ngram, bool) or not isinstance(ngram, int) or ngram < 2:
            raise ValueError(f"ngram must be an int >= 2, got {ngram!r}")
        self.ngram = ngram
        self.name = f"lexical-v1-{ngram}"
        self.stored_features = False

    def features(self, text: str) -> frozenset[str]:
        """The feature set of ``text`` (cached: the same text is analysed once per process)."""
        return _lexical_features(text, self.ngram)

    def encode(self, texts: Sequence[str]) -> list[JSONValue]:
        # The features are a pure function of the intention text, which is stored anyway: nothing extra to keep.
        return [None for _ in texts]

    def encode_query(self, text: str) -> JSONValue:
        return None

    def scores(self, query: object, candidates: Sequence[object]) -> list[float]:
        """``query``/``candidates``: intention texts (strings) or feature sets."""
        q: frozenset[str] = query if isinstance(query, frozenset) else self.features(cast(str, query))
        out = []
        lq = len(q)
        for cand in candidates:
            c: frozenset[str] = cand if isinstance(cand, frozenset) else self.features(cast(str, cand))
            shared = len(q & c)
            out.append(shared / math.sqrt(lq * len(c)) if shared else 0.0)
        return out

    def prepare(self, candidates: Sequence[object]) -> object:
        """Candidates (intention texts) as a sparse feature matrix (NumPy when installed, else feature sets)."""
        feats: list[frozenset[str]] = [
            c if isinstance(c, frozenset) else self.features(cast(str, c)) for c in candidates
        ]
        if _np is None or not feats:
            return feats
        vocab: dict[str, int] = {}
        indices: list[int] = []
        starts: list[int] = []
        for f in feats:
            starts.append(len(indices))
            indices.extend(vocab.setdefault(x, len(vocab)) for x in f)
        return _Matrix(
            vocab,
            _np.asarray(indices, dtype=_np.int32),
            _np.asarray(starts, dtype=_np.int64),
            _np.sqrt(_np.asarray([len(f) for f in feats], dtype=_np.float64)),
        )

    def above(self, query: object, prepared: object, floor: float) -> list[tuple[int, float]]:
        if not isinstance(prepared, _Matrix):
            return super().above(query, prepared, floor)
        q: frozenset[str] = query if isinstance(query, frozenset) else self.features(cast(str, query))
        ids = [prepared.vocab[x] for x in q if x in prepared.vocab]
        if not ids:
            return [(i, 0.0) for i in range(len(prepared.starts))] if floor <= 0 else []
        mask = _np.zeros(len(prepared.vocab), dtype=_np.int32)
        mask[ids] = 1
        shared = _np.add.reduceat(mask[prepared.indices], prepared.starts)
        scores = shared / (prepared.norms * math.sqrt(len(q)))
        picked = _np.nonzero(scores >= floor)[0]
        return [(int(i), float(scores[i])) for i in picked]

    def __repr__(self) -> str:
        return f"LexicalSimilarity(ngram={self.ngram})"


class _Matrix:
    """Prepared lexical candidates: CSR-style feature ids, row starts and the square roots of row sizes."""

    __slots__ = ("indices", "norms", "starts", "vocab")

    def __init__(
        self,
        vocab: dict[str, int],
        indices: npt.NDArray[np.int32],
        starts: npt.NDArray[np.int64],
        norms: npt.NDArray[np.float64],
    ) -> None:
        self.vocab, self.indices, self.starts, self.norms = vocab, indices, starts, norms


def _pack(vector: Sequence[float]) -> str:
    return base64.b64encode(array("f", vector).tobytes()).decode("ascii")


def _unpack(data: object) -> list[float]:
    # ``data``: a packed vector (a string) or a sequence of floats; unchecked (a scoring hot path).
    if isinstance(data, str):
        arr = array("f")
        arr.frombytes(base64.b64decode(data))
        return arr.tolist()
    return list(cast("Sequence[float]", data))


def _cosine01(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if not na or not nb:
        return 0.0
    return max(0.0, min(1.0, dot / (na * nb)))


class EmbeddingsSimilarity(Similarity):
    """Similarity from any LangChain ``Embeddings``: cosine of the vectors, negatives clipped to 0.

    Stored intentions are embedded with ``embed_documents`` (once, at store time; kept as packed float32 with the
    memory), the looked-up one with ``embed_query``.

    Args:
        embeddings: a ``langchain_core.embeddings.Embeddings``.
        name: identifies the model (default: the class name plus its ``model``/``model_name`` attribute); change it
            when you change the model, so stored vectors are not compared with another model's.

    Raises:
        TypeError: ``embeddings`` lacks ``embed_documents``/``embed_query``.
    """

    def __init__(self, embeddings: Embeddings, name: str | None = None) -> None:
        if not callable(getattr(embeddings, "embed_documents", None)) or not callable(
            getattr(embeddings, "embed_query", None)
        ):
            raise TypeError(f"embeddings must be a LangChain Embeddings, got {type(embeddings).__name__}")
        self.embeddings = embeddings
        model = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None) or ""
        self.name = name or f"embeddings:{type(embeddings).__name__}:{model}"

    def encode(self, texts: Sequence[str]) -> list[JSONValue]:
        return [_pack(v) for v in self.embeddings.embed_documents(list(texts))]

    def encode_query(self, text: str) -> JSONValue:
        return _pack(self.embeddings.embed_query(text))

    async def aencode(self, texts: Sequence[str]) -> list[JSONValue]:
        return [_pack(v) for v in await self.embeddings.aembed_documents(list(texts))]

    async def aencode_query(self, text: str) -> JSONValue:
        return _pack(await self.embeddings.aembed_query(text))

    def scores(self, query: object, candidates: Sequence[object]) -> list[float]:
        q = _unpack(query)
        return [_cosine01(q, _unpack(c)) for c in candidates]

    def prepare(self, candidates: Sequence[object]) -> object:
        """Stored vectors as one unit-row matrix (NumPy when installed, else the list)."""
        if _np is None or not candidates:
            return list(candidates)
        matrix = _np.asarray([_unpack(c) for c in candidates], dtype=_np.float32)
        norms = _np.linalg.norm(matrix, axis=1, keepdims=True)
        return _Vectors(cast("npt.NDArray[np.float32]", matrix / _np.where(norms == 0, 1.0, norms)))

    def above(self, query: object, prepared: object, floor: float) -> list[tuple[int, float]]:
        if not isinstance(prepared, _Vectors):
            return super().above(query, prepared, floor)
        q = _np.asarray(_unpack(query), dtype=_np.float32)
        norm = float(_np.linalg.norm(q))
        if not norm:
            return []
        scores = _np.clip(prepared.matrix @ (q / norm), 0.0, 1.0)
        return [(int(i), float(scores[i])) for i in _np.nonzero(scores >= floor)[0]]

    def __repr__(self) -> str:
        return f"EmbeddingsSimilarity({self.name!r})"


class _Vectors:
    __slots__ = ("matrix",)

    def __init__(self, matrix: npt.NDArray[np.float32]) -> None:
        self.matrix = matrix


def as_similarity(value: object) -> Similarity:
    """``None`` -> `LexicalSimilarity`; a `Similarity` as is; an ``Embeddings`` wrapped.

    Raises:
        TypeError: anything else (the message names the type).
    """
    if value is None:
        return LexicalSimilarity()
    if isinstance(value, Similarity):
        return value
    if callable(getattr(value, "embed_documents", None)):
        return EmbeddingsSimilarity(cast("Embeddings", value))
    raise TypeError(f"similarity must be a Similarity, a LangChain Embeddings or None, got {type(value).__name__}")

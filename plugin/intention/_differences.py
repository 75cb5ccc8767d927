"""The word check of a similar match: every content word one intention has and the other lacks must be matched by
a near-synonym on the other side.

Content words are the words outside the veto lists' fillers and pronouns (``data/vetoes.json``), compared by
their Snowball stems, so inflection ("cards"/"card") is no difference. A word one side lacks is accepted only when
the other side holds a word whose embedding (the memory's own ``Embeddings``, one word at a time) has cosine at
least ``word_threshold`` with it ("search" for "find", "tmrw" for "tomorrow"); an added or replaced word with no
such partner ("weather alerts" vs "weather", "open" vs "closed") blocks the match. The word threshold is measured
on the package's calibration pairs (bench/README.md, "Intention cache").

Phrasal verbs. A verb and the adverb particle right after it ("switch off", "call off", "back up") are one unit of
meaning whose words alone say little ("call" is not "cancel"). Besides its words, each side therefore offers its
*phrasal units*: a content word directly followed by a word of `PARTICLES`, embedded as the two-word phrase. A
word with no partner of its own is excused when its phrasal unit has a partner (a word or a phrasal unit of the
other side, cosine at least ``word_threshold``: the same rule as for single words), and a word may find its
partner among the other side's phrasal units ("cancel" / "call off", "switch off" / "turn off"). Two units with
the same verb never partner each other, nor a unit and its own bare verb: there only the particle differs, and the
particle is then the whole difference ("log in" / "log out", "sign up" / "sign out"); a particle on its own is
compared with words only, as before. The phrasal units only ever add partners; a text without particles is
checked as before.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

from promptcache.intention._vetoes import _data, _words
from promptcache.intention._vocabulary import stem

__all__ = ["DEFAULT_WORD_THRESHOLD", "PARTICLES", "WordCheck", "content_stems", "phrasal_units", "word_units"]

DEFAULT_WORD_THRESHOLD = 0.7
"""Least cosine of a word and its stand-in on the other side (all-MiniLM-L6-v2 scale)."""
SHORT_INTENTION_WORDS = 6
"""The check applies when a side has at most this many content words: in a short intention one word is much of
what is asked; long texts (a paragraph, a rewritten question) are left to the sentence similarity."""
PARTICLES = frozenset(
    "about across along around aside away back by down forth home in off on out over past round through under up".split()
)
"""The adverb particles of English phrasal verbs: a closed grammatical class, as listed in Biber, Johansson,
Leech, Conrad and Finegan, *Longman Grammar of Spoken and Written English* (1999), section 5.3.2.1 (the adverbial
particles that combine with verbs in phrasal verbs). Not fitted to any data set."""


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


@lru_cache(maxsize=65536)
def phrasal_units(text: str) -> dict[str, tuple[str, str]]:
    """Phrase -> ``(stem of its verb, particle)`` for each content word of ``text`` directly followed by a word of
    `PARTICLES` (``"call off the meeting"`` -> ``{"call off": ("call", "off")}``); words case-folded."""
    data = _data()
    low = [w.casefold() for w in _words(text)]
    out: dict[str, tuple[str, str]] = {}
    for w, nxt in zip(low, low[1:]):
        if nxt in PARTICLES and w not in data["fillers"] and w not in data["persons"]:
            out.setdefault(f"{w} {nxt}", (stem(w), nxt))
    return out


def word_units(text: str) -> list[str]:
    """Every unit the word check may embed for ``text``: its content words, then its phrasal units."""
    return list(content_stems(text).values()) + list(phrasal_units(text))


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
        pa, pb = phrasal_units(query), phrasal_units(stored)
        vecs = self._vecs(list(a.values()) + list(b.values()) + list(pa) + list(pb))
        out = []
        for lonely, mine, words, units in ((only_a, pa, b, pb), (only_b, pb, a, pa)):
            # The other side's units, each with the stem of its verb (a bare word is its own verb).
            bare = [(w, s) for s, w in words.items()]
            other = bare + [(u, v) for u, (v, _) in units.items()]
            for w in lonely:
                # A particle alone is compared with words only (as before): its meaning is its verb's.
                if self._partnered(w, None, bare if w in PARTICLES else other, vecs):
                    continue
                # The word's own phrasal units: the word as their verb or as their particle.
                own = [(u, v) for u, (v, p) in mine.items() if w in (u.split(" ", 1)[0], p)]
                if not any(self._partnered(u, v, other, vecs) for u, v in own):
                    out.append(w)
        return out

    def _partnered(self, unit: str, verb: str | None, other: list[tuple[str, str]], vecs: dict[str, Any]) -> bool:
        """Whether ``unit`` (a word, or a phrasal unit whose verb stem is ``verb``) has a partner among ``other``
        (``(unit, verb stem)`` pairs): cosine at least ``word_threshold`` and, for a phrasal unit, another verb."""
        return any(float(vecs[unit] @ vecs[o]) >= self.word_threshold for o, v in other if verb is None or v != verb)

    def passes(self, query: str, stored: str) -> bool:
        """Whether the two differ in content words and every unshared one has a near-synonym on the other side. Two
        intentions with the same content words differ only in order and function words: the lexical normal form
        (`promptcache.intention._meaning`) judges those, and word order can change who does what."""
        if content_stems(query).keys() == content_stems(stored).keys():
            return False
        return not self.missing(query, stored)

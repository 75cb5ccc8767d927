"""The word lists the intention verifier reads: ``plugin/intention/data/*.json`` (package data), stemmed once.

- ``contractions.json``: contractions and their expansions ("don't" -> "do not").
- ``fillers.json``: words and phrases that carry no meaning in a request (articles, the user's and assistant's
  pronouns, politeness, auxiliaries, "show me"-type verbs).
- ``synonyms.json``: other spellings and abbreviations of one word ("e mail" = "email", "km" = "kilometre"); never
  two words of similar meaning (its ``_about`` lists the merges left out because they can change the action).
- ``structure.json``: role markers (prepositions), free adverbs, negations, the words after which "to" starts an
  infinitive, units that follow numbers, number words and currency symbols.

All lists are general English written for this package (the source of each is in the file's ``_about``), not fitted
to any data set. Words are compared after Snowball English stemming (the ``snowballstemmer`` package), so "booked",
"books" and "booking" are one word. `Vocabulary.version` is a digest of the lists in the files (not of their
``_about`` descriptions or layout): a signature made with other lists never equals one made with these, and stored
memories are re-indexed on read after a change (`promptcache.intention._lookup`).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import snowballstemmer  # untyped: ignore_missing_imports in pyproject.toml

__all__ = ["MULTIPLICATIVE_UNIT", "Vocabulary", "default_vocabulary", "stem"]

MULTIPLICATIVE_UNIT = "times"
"""The word a multiplicative reads as after its number: "twice" is "2 times" (``structure.json``)."""

_STEMMER = snowballstemmer.stemmer("english")
_STEM_LOCK = threading.Lock()  # a Snowball stemmer object keeps per-call state


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of a case-folded ``word`` (cached); tokens holding digits are returned as is."""
    if any(c.isdigit() for c in word):
        return word
    with _STEM_LOCK:
        return str(_STEMMER.stemWord(word))


def _stems(phrase: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in phrase.split())


@dataclass(frozen=True)
class Vocabulary:
    """The verifier's word lists, in the form the analysis looks them up (stems unless said otherwise).

    Attributes:
        contractions: surface word -> its expansion (surface words).
        fillers: stems of words without meaning; ``filler_surface``: the same words unstemmed (what is matched).
        phrases: stemmed phrase (2+ words) -> ``""`` (a filler phrase, dropped) or its synonym class id.
        classes: stem -> synonym class id (the class's first entry, stemmed and joined by ``_``).
        markers / free / negations / infinitive_heads / after_number: surface words (see ``structure.json``).
        numbers: number and ordinal words -> digits (``"five"`` -> ``"5"``, ``"third"`` -> ``"3rd"``).
        multiplicatives: "once", "twice", "thrice" -> digits, read as the number and `MULTIPLICATIVE_UNIT`.
        symbols: currency and other symbols -> words (``"$"`` -> ``"dollar"``).
        tense / modals: word -> the token it counts as (``"did"`` -> ``"past"``, ``"could"`` -> ``"can"``).
        addressee: words for the assistant (a modal or tense word before one is a polite request, dropped).
        auxiliaries: do/does/did (dropped before another word, the verb "do" otherwise).
        request_verbs / first_person: "I want", "we need" opening an intention (a request form, dropped).
        imperatives: "show", "tell", "find" opening an intention (after fillers only; dropped).
        question_openers / copulas / wh_words: what tells a yes/no question from a statement (``structure.json``).
        longest_phrase: words in the longest phrase.
        version: digest of the data files' lists (12 hex digits; descriptions and layout left out).
    """

    contractions: dict[str, tuple[str, ...]]
    fillers: frozenset[str]
    filler_surface: frozenset[str]
    phrases: dict[tuple[str, ...], str]
    classes: dict[str, str]
    markers: frozenset[str]
    free: frozenset[str]
    negations: frozenset[str]
    infinitive_heads: frozenset[str]
    after_number: frozenset[str]
    numbers: dict[str, str]
    multiplicatives: dict[str, str]
    symbols: dict[str, str]
    tense: dict[str, str]
    modals: dict[str, str]
    addressee: frozenset[str]
    auxiliaries: frozenset[str]
    request_verbs: frozenset[str]
    imperatives: frozenset[str]
    first_person: frozenset[str]
    question_openers: frozenset[str]
    copulas: frozenset[str]
    wh_words: frozenset[str]
    longest_phrase: int
    version: str


def _load(name: str) -> tuple[dict[str, Any], bytes]:
    raw = resources.files("promptcache.intention").joinpath("data").joinpath(name).read_bytes()
    return json.loads(raw), raw


@lru_cache(maxsize=1)
def default_vocabulary() -> Vocabulary:
    """The package's vocabulary (loaded once per process).

    Raises:
        FileNotFoundError / ValueError: a data file is missing or not the expected JSON (a broken install).
    """
    digest = hashlib.sha256()
    loaded = {}
    for name in ("contractions.json", "fillers.json", "synonyms.json", "structure.json"):
        data, _ = _load(name)
        # The lists only: an edit of a file's description ("_about") or its layout changes no signature.
        lists = {k: v for k, v in data.items() if k != "_about"} if isinstance(data, dict) else data
        digest.update(name.encode() + b"\0" + json.dumps(lists, sort_keys=True, ensure_ascii=False).encode() + b"\0")
        loaded[name] = data
    contractions = {k: tuple(v.split()) for k, v in loaded["contractions.json"]["words"].items()}
    fillers = loaded["fillers.json"]
    phrases: dict[tuple[str, ...], str] = {_stems(p): "" for p in fillers["phrases"]}
    classes: dict[str, str] = {}
    for members in loaded["synonyms.json"]["classes"]:
        class_id = "_".join(_stems(members[0]))
        for member in members:
            key = _stems(member)
            if len(key) > 1:
                phrases[key] = class_id
            else:
                classes[key[0]] = class_id
    structure = loaded["structure.json"]
    numbers = dict(structure["number_words"])
    numbers.update(structure["ordinals"])
    return Vocabulary(
        contractions=contractions,
        fillers=frozenset(stem(w) for w in fillers["words"]),
        filler_surface=frozenset(fillers["words"]),
        phrases=phrases,
        classes=classes,
        markers=frozenset(structure["markers"]),
        free=frozenset(structure["free"]),
        negations=frozenset(structure["negations"]),
        infinitive_heads=frozenset(structure["infinitive_heads"]),
        after_number=frozenset(structure["after_number"]),
        numbers=numbers,
        multiplicatives=dict(structure["multiplicatives"]),
        symbols=dict(structure["symbols"]),
        tense=dict(structure["tense"]),
        modals=dict(structure["modals"]),
        addressee=frozenset(structure["addressee"]),
        auxiliaries=frozenset(structure["auxiliaries"]),
        request_verbs=frozenset(structure["request_verbs"]),
        imperatives=frozenset(structure["imperatives"]),
        first_person=frozenset(structure["first_person"]),
        question_openers=frozenset(structure["mood"]["question_openers"]),
        copulas=frozenset(structure["mood"]["copulas"]),
        wh_words=frozenset(structure["mood"]["wh_words"]),
        longest_phrase=max(len(p) for p in phrases),
        version=digest.hexdigest()[:12],
    )

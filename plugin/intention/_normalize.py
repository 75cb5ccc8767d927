"""Intention text: normalisation for the exact match, tokens, and the anchors (numbers, named entities).

- `normalize_intention` gives the exact-match form: Unicode NFKC, case-folded, punctuation removed (except
  inside numbers, each one token with everything that changes its value, `promptcache.intention._numbers`:
  ``.5``, ``1,5``, ``-5``, ``5²``, ``1.2.3`` and ``1/2`` are not ``5``, ``15``, ``52``, ``123`` and ``12``;
  currency and percent signs are kept as tokens, so "$50" and "€50" differ), whitespace collapsed. "What's the weather in Paris?" and
  "what's  the weather in paris" are the same intention.
- `anchors` finds what must agree before two different intentions may match: numbers (digits, and the
  vocabulary's number and ordinal words, ``structure.json``), each with its unit (the word right after it: "5
  minutes", "5pm", "5kg"), and named entities recognised by their *shape*, without a model: capitalised words that
  do not start a sentence (``Paris``), all-caps words of two letters or more (``SOMEAPP``, ``PIN``), words mixing
  letters and digits (``SOMEAPP2``, ``A320``) and quoted phrases. A lower-case proper name ("weather in paris") is
  not recognised; the similarity threshold alone decides then.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from promptcache.intention._numbers import CODE, NUMBER, canonical, clean, is_number, roman

__all__ = ["Anchors", "anchors", "anchors_agree", "normalize_intention", "tokens", "validate_intention"]

# Tokens: numbers first (so "1.5" stays one token), then words (letters/digits/apostrophes inside a word).
_TOKEN_RE = re.compile(rf"{NUMBER}|{CODE}|[^\W_]+(?:['’][^\W_]+)*|[$€£¥₹%]", re.UNICODE)
_QUOTED_RE = re.compile(r"[\"“”«»]([^\"“”«»]{1,80})[\"“”«»]")
_SENTENCE_END_RE = re.compile(r"[.!?:;\n]\s*$")

_ORDINAL_SUFFIX = re.compile(r"(\d+)(st|nd|rd|th)")


@functools.lru_cache(maxsize=1)
def _number_words() -> dict[str, tuple[str, str]]:
    """Number, ordinal and multiplicative words (the vocabulary's lists, ``structure.json``) -> ``(digits, unit)``:
    "thirty" -> ``("30", "")``, "third" -> ``("3", "rd")``, as "3rd" reads, "twice" -> ``("2", unit of "times")``,
    as "2 times" reads."""
    from promptcache.intention._vocabulary import MULTIPLICATIVE_UNIT, default_vocabulary

    vocab = default_vocabulary()
    out: dict[str, tuple[str, str]] = {}
    for word, value in vocab.numbers.items():
        m = _ORDINAL_SUFFIX.fullmatch(value)
        out[word] = (m.group(1), m.group(2)) if m else (value, "")
    for word, value in vocab.multiplicatives.items():
        out[word] = (value, _unit(MULTIPLICATIVE_UNIT))
    return out


@functools.lru_cache(maxsize=1)
def _not_units() -> frozenset[str]:
    """Words that never name what a number counts: function words (``vetoes.json`` fillers, persons, free adverbs,
    negations; ``structure.json`` role markers), except those ``structure.json`` lists as read after a number
    ("am", "pm")."""
    from importlib.resources import files

    def load(name: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(files("promptcache.intention").joinpath(f"data/{name}").read_text("utf-8"))
        return data

    vetoes, structure = load("vetoes.json"), load("structure.json")
    words = {*vetoes["fillers"], *vetoes["persons"], *vetoes["free"], *vetoes["negations"], *structure["markers"]}
    return frozenset(words - set(structure["after_number"]))


def _unit(word: str) -> str:
    """The spelling class of a unit word (``synonyms.json``, by stem): "min"/"minutes" are one where listed."""
    from promptcache.intention._vocabulary import default_vocabulary, stem

    key = stem(word)
    return default_vocabulary().classes.get(key, key)


# Capitalised words that are not names wherever they stand (the pronoun "I" and its contractions).
_NOT_NAMES = frozenset({"i", "i'm", "i've", "i'd", "i'll"})


def validate_intention(intention: object, *, what: str = "intention") -> str:
    """Check an intention: a string with at least one letter or digit. Returns it unchanged.

    Raises:
        TypeError: not a ``str`` (the message names the type and value).
        ValueError: empty, nothing but whitespace/punctuation, or holding a lone surrogate (``"\\ud800"``, which no
            backend can store as UTF-8); the message shows the value.
    """
    if not isinstance(intention, str):
        raise TypeError(f"{what} must be a str, got {type(intention).__name__}: {intention!r}")
    try:
        intention.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(
            f"{what} must be valid Unicode text, got {intention!r} (a lone surrogate at index {exc.start})"
        ) from None
    if not normalize_intention_unchecked(intention):
        raise ValueError(f"{what} must contain at least one letter or digit, got {intention!r}")
    return intention


def tokens(text: str) -> list[str]:
    """The case-folded word and number tokens of ``text`` (`clean` text; numbers `canonical`: ``1,000,000`` ->
    ``1000000``, ``1,5`` as written)."""
    out = []
    for tok in _TOKEN_RE.findall(clean(text)):
        out.append(canonical(tok) if is_number(tok) else tok.casefold())  # a sign ("$") is its own token
    return out


@functools.lru_cache(maxsize=256)
def normalize_intention_unchecked(text: str) -> str:
    """``" ".join(tokens(text))``, no checks. Memoised (the last 256 texts): one agent turn looks its intention up,
    stores and validates it several times, and an intention can be a long user message."""
    return " ".join(tokens(text))


def normalize_intention(intention: str) -> str:
    """The exact-match form of ``intention``: case-folded tokens joined by single spaces (see the module docstring).

    Raises:
        TypeError / ValueError: as `validate_intention`.
    """
    validate_intention(intention)
    return normalize_intention_unchecked(intention)


@dataclass(frozen=True)
class Anchors:
    """What must agree between two intentions: ``numbers`` (canonical strings), ``entities`` (case-folded) and
    ``quantities``: each number with what it counts, ``(number, unit)``, the unit being the spelling class of the
    word right after it ("5 minutes", "5pm", "5kg"; ``""`` when a function word, another number or nothing
    follows)."""

    numbers: frozenset[str]
    entities: frozenset[str]
    quantities: frozenset[tuple[str, str]] = field(default=frozenset())


def anchors(text: str) -> Anchors:
    """Numbers and shape-recognised named entities of ``text`` (see the module docstring)."""
    text = clean(text)
    numbers: set[str] = set()
    entities: set[str] = set()
    for match in _QUOTED_RE.finditer(text):
        phrase = " ".join(tokens(match.group(1)))
        if phrase:
            entities.add(phrase)
    found = list(_TOKEN_RE.finditer(text))
    values: list[tuple[str, str] | None] = [_value(m.group(0)) for m in found]
    quantities: set[tuple[str, str]] = set()
    for i, match in enumerate(found):
        tok = match.group(0)
        folded = tok.casefold()
        value = values[i]
        if value is not None:
            number, unit = value
            numbers.add(number)
            if not unit and i + 1 < len(found) and values[i + 1] is None:
                nxt = found[i + 1].group(0).casefold()
                gap = text[match.end() : found[i + 1].start()]
                if nxt[:1].isalpha() and nxt not in _not_units() and not _PUNCT_GAP.search(gap):
                    unit = _unit(nxt)
            quantities.add((number, unit))
            continue
        if folded in _NOT_NAMES:
            continue
        has_digit = any(c.isdigit() for c in tok)
        letters = [c for c in tok if c.isalpha()]
        if (
            has_digit
            and letters
            or len(letters) >= 2
            and all(c.isupper() for c in letters)
            or tok[0].isupper()
            and not _starts_sentence(text, match.start())
        ):
            entities.add(folded)
    return Anchors(frozenset(numbers), frozenset(entities), frozenset(quantities))


_PUNCT_GAP = re.compile(r"[.,;:!?\n]")


def _value(tok: str) -> tuple[str, str] | None:
    """``(canonical number, unit)`` of a number token, a Roman numeral (`roman`: "ii" is ``("2", "")``) or a number
    word (the unit: an ordinal's suffix, "third" -> ``("3", "rd")``; a multiplicative's "times"), else ``None``."""
    if is_number(tok):
        return canonical(tok), ""
    value = roman(tok)
    if value is not None:
        return str(value), ""
    return _number_words().get(tok.casefold())


def _starts_sentence(text: str, start: int) -> bool:
    before = text[:start]
    return not before.strip() or bool(_SENTENCE_END_RE.search(before))


def anchors_agree(a: Anchors, a_tokens: frozenset[str], b: Anchors, b_tokens: frozenset[str]) -> bool:
    """Whether two intentions agree on their anchors.

    Numbers must be the same sets, each with the same unit ("5 minutes" vs "5 seconds", "5pm" vs "5am" disagree;
    "5 min" and "5 minutes" agree where ``synonyms.json`` lists them as one spelling class). Each entity of one side must occur in the other side's text (any case: a name
    capitalised on one side only still agrees; multi-word quoted entities are checked word by word), so "weather
    in Paris" vs "weather in London", "page 1" vs "page 2" and "SOMEAPP" vs "SOMEAPP2" all disagree.
    """
    if a.numbers != b.numbers or a.quantities != b.quantities:
        return False
    for ents, other in ((a.entities, b_tokens), (b.entities, a_tokens)):
        for ent in ents:
            if not all(part in other for part in ent.split()):
                return False
    return True

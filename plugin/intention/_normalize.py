"""Intention text: normalisation for the exact match, tokens, and the anchors (numbers, named entities).

- `normalize_intention` gives the exact-match form: Unicode NFKC, case-folded, punctuation removed (except
  inside numbers, each one token with everything that changes its value, `promptcache.intention._numbers`:
  ``.5``, ``1,5``, ``-5``, ``5²``, ``1.2.3`` and ``1/2`` are not ``5``, ``15``, ``52``, ``123`` and ``12``;
  currency and percent signs are kept as tokens, so "$50" and "€50" differ), whitespace collapsed. "What's the weather in Paris?" and
  "what's  the weather in paris" are the same intention.
- `anchors` finds what must agree before two different intentions may match: numbers (digits, and the number
  words zero..twenty) and named entities recognised by their *shape*, without a model: capitalised words that do
  not start a sentence (``Paris``), all-caps words of two letters or more (``SOMEAPP``, ``PIN``), words mixing
  letters and digits (``SOMEAPP2``, ``A320``) and quoted phrases. A lower-case proper name ("weather in paris") is
  not recognised; the similarity threshold alone decides then.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from promptcache.intention._numbers import CODE, NUMBER, canonical, clean, is_number

__all__ = ["Anchors", "anchors", "anchors_agree", "normalize_intention", "tokens", "validate_intention"]

# Tokens: numbers first (so "1.5" stays one token), then words (letters/digits/apostrophes inside a word).
_TOKEN_RE = re.compile(rf"{NUMBER}|{CODE}|[^\W_]+(?:['’][^\W_]+)*|[$€£¥₹%]", re.UNICODE)
_QUOTED_RE = re.compile(r"[\"“”«»]([^\"“”«»]{1,80})[\"“”«»]")
_SENTENCE_END_RE = re.compile(r"[.!?:;\n]\s*$")

# Number words are numbers too: "page one" must not match "page two". Source: English cardinals.
NUMBER_WORDS: dict[str, str] = {
    w: str(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
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
    """What must agree between two intentions: ``numbers`` (canonical strings) and ``entities`` (case-folded)."""

    numbers: frozenset[str]
    entities: frozenset[str]


def anchors(text: str) -> Anchors:
    """Numbers and shape-recognised named entities of ``text`` (see the module docstring)."""
    text = clean(text)
    numbers: set[str] = set()
    entities: set[str] = set()
    for match in _QUOTED_RE.finditer(text):
        phrase = " ".join(tokens(match.group(1)))
        if phrase:
            entities.add(phrase)
    for match in _TOKEN_RE.finditer(text):
        tok = match.group(0)
        folded = tok.casefold()
        if is_number(tok):
            numbers.add(canonical(tok))
            continue
        if folded in NUMBER_WORDS:
            numbers.add(NUMBER_WORDS[folded])
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
    return Anchors(frozenset(numbers), frozenset(entities))


def _starts_sentence(text: str, start: int) -> bool:
    before = text[:start]
    return not before.strip() or bool(_SENTENCE_END_RE.search(before))


def anchors_agree(a: Anchors, a_tokens: frozenset[str], b: Anchors, b_tokens: frozenset[str]) -> bool:
    """Whether two intentions agree on their anchors.

    Numbers must be the same sets. Each entity of one side must occur in the other side's text (any case: a name
    capitalised on one side only still agrees; multi-word quoted entities are checked word by word), so "weather
    in Paris" vs "weather in London", "page 1" vs "page 2" and "SOMEAPP" vs "SOMEAPP2" all disagree.
    """
    if a.numbers != b.numbers:
        return False
    for ents, other in ((a.entities, b_tokens), (b.entities, a_tokens)):
        for ent in ents:
            if not all(part in other for part in ent.split()):
                return False
    return True

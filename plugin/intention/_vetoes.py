"""Cheap, principled vetoes: differences that change what an intention asks for, however similar the texts are.

A similar match is served without the model only when no veto fires (`veto`); each names a kind of
difference an embedding model is known to blur, because it changes few tokens:

- ``numbers`` / ``names``: the numbers (digits, number words) or shape-recognised names differ
  (`anchors_agree`): "page 1" vs "page 2", "Paris" vs "London"; a number keeps its sign, decimal point or comma,
  power and fraction (`promptcache.intention._numbers`): "5" vs ".5", "15" vs "1,5", "52" vs "5²".
- ``marks``: case or symbols that carry meaning differ: words with a capital after their first letter ("MB" vs
  "Mb", "iPhone") must be spelt the same, and symbols must appear in the same order ("2^10" vs "2*10", "6×3" vs
  "6÷3", "5₿" vs "5₽", "6'" vs '6"'): operators, every Unicode symbol, dashes, and a unit mark right after a digit
  (`_symbols`).
- ``negation``: one side is negated and the other is not (an odd number of "not", "no", "never", "n't" ...).
- ``roles``: the people involved appear in another order ("i owe you" vs "you owe me", "what would you like to
  call me" vs "what would you like me to call you"), or a side names another person ("my" vs "your").
- ``antonym``: one side holds a word whose opposite the other holds (``antonyms.json``: opposite actions and
  states, and the negating prefixes un-/dis-/de-: "lock" vs "unlock").
- ``mood``: one side asks whether something happened ("did you transfer ...", "has it arrived") and the other asks
  for it to be done or for something else ("could you transfer ..."): a status question is not a request.
- ``filler``: a side has no content word at all ("okay", "thanks"): such an intention only matches exactly.

Sources: English grammar (pronoun persons, auxiliaries, negators); the word lists are in ``data/`` with their
``_about`` notes. None of them is a synonym list: a veto only ever blocks a match.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from importlib.resources import files
from typing import Any, Final

from promptcache.intention._matching import anchor_info
from promptcache.intention._normalize import anchors_agree
from promptcache.intention._numbers import NUMBER, clean, roman

__all__ = ["VETOES", "exact_key", "prepare_veto", "veto"]

VETOES = ("filler", "numbers", "marks", "negation", "roles", "antonym", "mood")
"""Every veto, in the order they are tried (the first that fires is reported)."""

ORDER_CHECK_WORDS = 6
"""The word-order part of the ``roles`` veto applies when a side has at most this many content words: the scope of
the word check (`promptcache.intention._differences.SHORT_INTENTION_WORDS`). In a short intention the order of
its few words is who does what; a long text (a sentence of documentation, a rewritten question) is reordered by
ordinary paraphrase (passive voice, a fronted clause), which the veto refused on GPTCache's calibration pairs
(bench/README.md, "What each constant was measured on")."""

_WORD_RE = re.compile(r"[^\W_]+(?:'[^\W_]+)*", re.UNICODE)
_SYMBOLS = frozenset("^*/+-=<>%$€£¥₹#@&|~")
_PUNCT = re.compile(r"[.,;:!?\"“”«»()\[\]{}]")
_NUMBER_OR_PUNCT = re.compile(rf"({NUMBER})|{_PUNCT.pattern}")


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    raw = files("promptcache.intention").joinpath("data/vetoes.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(raw)
    return data


_NUMBER_RE = re.compile(NUMBER)


def _clean(text: str) -> str:
    """`clean` text, each number's power written with a small ``e`` ("1E5" is "1e5": one value, one spelling)."""
    return _NUMBER_RE.sub(lambda m: m.group(0).lower(), clean(text))


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(_clean(text))


def _fold(word: str) -> str:
    """A word case-folded when its case carries no meaning: all lower, only its first letter upper, or all upper
    and longer than three letters (emphasis: "WEATHER"). Short all-caps words (units, codes: "MB", "PIN") and words
    mixing case after their first letter ("iPhone", "Mb" inside "kMb") keep their case."""
    rest = word[1:]
    if rest == rest.lower():
        return word.casefold()
    if word == word.upper() and sum(c.isalpha() for c in word) > 3:
        return word.casefold()
    return word


@lru_cache(maxsize=65536)  # recomputed from each stored intention on every lookup of its group
def exact_key(text: str) -> str:
    """The exact-match key of an intention: `clean` text; sentence punctuation (``. , ; : ! ?`` outside numbers)
    and quotes/brackets dropped; whitespace collapsed; words whose case carries no meaning case-folded (`_fold`);
    other case ("MB", "iPhone") and every other symbol kept ("2^10" != "2*10"); each number as written, with its
    sign, separators, leading point and power (`promptcache.intention._numbers.NUMBER`: "1.5" != "15", ".5" != "5",
    "5²" != "52")."""
    text = _NUMBER_OR_PUNCT.sub(lambda m: m.group(1) or " ", _clean(text))
    if _shouted(text):
        return " ".join(text.casefold().split())
    out = []
    pos = 0
    for m in _WORD_RE.finditer(text):
        out.append(text[pos : m.start()])
        out.append(_fold_at(text, m))
        pos = m.end()
    out.append(text[pos:])
    return " ".join("".join(out).split())


_UNIT_LETTERS: Final = 3  # letters of a unit symbol that keeps its case after a number ("M", "Mm", "kWh")
_TITLE_WORD_LETTERS: Final = 4  # title case capitalises every word of at least this many letters (AP style)


def _fold_at(text: str, word: re.Match[str]) -> str:
    """`_fold` of a word of ``text``, except for what a number makes of it:

    - a Roman numeral read as a number (`promptcache.intention._numbers.roman`) is case-folded: "II" is "ii";
    - a unit symbol right after a number keeps its case: a word of at most three letters whose nearest non-space
      character before it is a digit ("5 M" is not "5 m", "5 Mm" not "5 mm": SI prefixes and units differ by case);
    - a longer capitalised word right after a number keeps its capital too ("500 Calories", kilocalories, is not
      "500 calories"): after a number a word never starts a sentence, so its capital is the writer's choice of
      word, unless the whole text is in title case (`_title_case`: "Book 5 Rooms In Paris"), where it is style.
    """
    w = word.group(0)
    if roman(w) is not None:
        return w.casefold()
    if w.isalpha() and _after_digit(text, word.start()):
        if len(w) <= _UNIT_LETTERS:
            return w
        if w[0].isupper() and w[1:].islower() and not _title_case(text):
            return w
    return _fold(w)


@lru_cache(maxsize=65536)
def _title_case(text: str) -> bool:
    """Whether ``text`` is written in title case: at least two words of `_TITLE_WORD_LETTERS` letters or more
    besides its first word, and every one of them capitalised (title case styles such as the AP Stylebook's
    capitalise every word of four letters or more; shorter function words, "in", "of", "the", may stay lower
    case; the first word is capitalised in any sentence and says nothing)."""
    long = [w for w in _WORD_RE.findall(text)[1:] if w.isalpha() and len(w) >= _TITLE_WORD_LETTERS]
    return len(long) >= 2 and all(w[0].isupper() for w in long)


def _after_digit(text: str, start: int) -> bool:
    """Whether the nearest non-space character before ``start`` is a digit."""
    i = start - 1
    while i >= 0 and text[i].isspace():  # back over the spaces only: no copy of the text before the word
        i -= 1
    return i >= 0 and text[i].isdigit()


def _symbols(clean: str) -> Iterator[str]:
    """The marks of ``clean`` text that carry meaning, in order: the operator symbols above; every other symbol
    (Unicode categories Sm, Sc, Sk and So: "×", "÷", "≥", "±", "₿", "¢", "°"); any dash (category Pd, written as
    "-", so "10 – 5" reads as "10 - 5"); and a punctuation mark right after a digit that is not sentence
    punctuation (category Po: feet and inches "6'" / '6"', "′", "″", per mille "‰"). A hyphen or dash between two
    letters joins a word ("e-mail") and is no mark."""
    unit_run = False  # inside a run of punctuation marks that follows a digit ('6″' is '6′′' once NFKC-folded)
    for i, c in enumerate(clean):
        category = unicodedata.category(c)
        after_digit = unit_run or (i > 0 and clean[i - 1].isdigit())
        unit_run = False
        if category == "Pd" or c == "-":
            if not (0 < i < len(clean) - 1 and clean[i - 1].isalpha() and clean[i + 1].isalpha()):
                yield "-"
        elif c in _SYMBOLS or category[0] == "S":
            yield c
        elif category == "Po" and after_digit and c not in _SENTENCE_PUNCTUATION:
            unit_run = True
            yield c


_SENTENCE_PUNCTUATION: Final = frozenset(".,;:!?…")


def _shouted(text: str) -> bool:
    """All in capitals, three words or more ("FLIGHTS TO SYDNEY"): the case is the writer's, not the words'."""
    words = [w for w in _WORD_RE.findall(text) if any(c.isalpha() for c in w)]
    return len(words) >= 3 and not any(c.islower() for c in text)


@lru_cache(maxsize=65536)
def _profile(text: str) -> tuple[Any, ...]:
    data = _data()
    words = _words(text)
    low = [w.casefold() for w in words]
    clean_text = _clean(text)
    marked = (
        frozenset()
        if _shouted(text)
        else frozenset(w for w in (_fold_at(clean_text, m) for m in _WORD_RE.finditer(clean_text)) if w != w.casefold())
    )
    clean = _clean(text)
    symbols = tuple(_symbols(clean))
    negations = sum(1 for w in low if w in data["negations"] or w.endswith("n't"))
    content = [w for w in low if w not in data["fillers"] and w not in data["persons"] and w not in data["free"]]
    names = frozenset(w.casefold() for w in words[1:] if w[:1].isupper())  # capitalised after the first word
    bindings = _bindings(low)
    return low, marked, symbols, negations % 2, _persons(low, data), _mood(low, data), tuple(content), bindings, names


def _bindings(low: list[str]) -> dict[str, str]:
    """Each word that follows a role marker (articles and possessives skipped) -> that marker."""
    data = _data()
    markers, skip = data["role_markers"], data["skip_before_argument"]
    out: dict[str, str] = {}
    for i, w in enumerate(low):
        if w not in markers:
            continue
        j = i + 1
        while j < len(low) and low[j] in skip:
            j += 1
        if j < len(low) and low[j] not in markers:
            out.setdefault(low[j], w)
    return out


def _roles_differ(
    a: tuple[str, ...], ba: dict[str, str], b: tuple[str, ...], bb: dict[str, str], names: frozenset[str]
) -> bool:
    """A word shared by both sides bound to different role markers (or to one on a side only), or two shared
    words that trade places around a third ("alice owes bob" / "bob owes alice"): any shared words in a short
    intention (at most `ORDER_CHECK_WORDS` content words on a side), only names (``names``: words capitalised
    after the first word on either side) in a longer one ("Aamir Khan read Mehra's script" / "Mehra read Aamir
    Khan's script")."""
    shared = set(a) & set(b)
    for w in set(ba) | set(bb):
        ma, mb = ba.get(w), bb.get(w)
        if ma == mb:
            continue
        if ma and mb or "than" in (ma, mb) and w in shared:
            return True
    # A long text reorders freely (passive voice, fronted clauses); who is named still counts there.
    movable = shared if min(len(a), len(b)) <= ORDER_CHECK_WORDS else shared & names
    return _trade_places(a, b, shared, movable)


def _trade_places(a: tuple[str, ...], b: tuple[str, ...], shared: set[str], movable: set[str]) -> bool:
    """Two ``movable`` words that trade places around a third shared word (``x y z`` on one side, ``z y x`` on
    the other)."""
    pa = {w: i for i, w in reversed(list(enumerate(a))) if w in shared}
    pb = {w: i for i, w in reversed(list(enumerate(b))) if w in shared}
    words = sorted(pa, key=pa.__getitem__)
    for i, x in enumerate(words):
        if x not in movable:
            continue
        for j in range(i + 2, len(words)):
            z = words[j]
            if z in movable and pb[z] < pb[x] and any(pb[z] < pb[y] < pb[x] for y in words[i + 1 : j]):
                return True
    return False


def _persons(low: list[str], data: dict[str, Any]) -> tuple[str, ...]:
    """The grammatical persons named, in order, repeats collapsed; the addressee of a request opener ("could
    you ...", "can you ...") is left out: it is the agent being asked, not a role of the intention."""
    persons: dict[str, str] = data["persons"]
    start = 0
    while start < len(low) and low[start] in data["openers"]:
        start += 1
    if start + 1 < len(low) and low[start] in data["request_modals"] and low[start + 1] in ("you", "u"):
        start += 2
    out: list[str] = []
    for w in low[start:]:
        p = persons.get(w)
        if p and (not out or out[-1] != p):
            out.append(p)
    return tuple(out)


def _mood(low: list[str], data: dict[str, Any]) -> str:
    """``"status"`` when the intention asks whether something happened (opens with a past or perfect auxiliary),
    else ``""``."""
    start = 0
    while start < len(low) and low[start] in data["openers"]:
        start += 1
    return "status" if start < len(low) and low[start] in data["status_openers"] else ""


def _antonyms(a: frozenset[str], b: frozenset[str]) -> bool:
    pairs: dict[str, list[str]] = _antonym_map()
    for word in a - b:
        for opposite in pairs.get(word, ()):
            if opposite in b and opposite not in a:
                return True
        for prefix in _data()["negating_prefixes"]:
            if prefix + word in b and prefix + word not in a:
                return True
            if word.startswith(prefix) and word[len(prefix) :] in b and word[len(prefix) :] not in a:
                return True
    return False


@lru_cache(maxsize=65536)
def _stemmed(words: tuple[str, ...]) -> frozenset[str]:
    """The words and their Snowball stems (so "weekdays" meets "weekday")."""
    from promptcache.intention._vocabulary import stem

    return frozenset(words) | frozenset(stem(w) for w in words)


@lru_cache(maxsize=1)
def _classes() -> dict[str, int]:
    return {w: i for i, members in enumerate(_data()["closed_classes"]) for w in members}


def _other_value(a: frozenset[str], b: frozenset[str]) -> bool:
    """One side holds a member of a closed class (a weekday, a month, a colour ...) the other lacks, and the other
    holds another member of that class it lacks."""
    classes = _classes()
    mine = {classes[w] for w in a - b if w in classes}
    return any(classes[w] in mine for w in b - a if w in classes)


@lru_cache(maxsize=1)
def _antonym_map() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for x, y in _data()["antonyms"]:
        out.setdefault(x, []).append(y)
        out.setdefault(y, []).append(x)
    return out


def prepare_veto(text: str) -> None:
    """Computes (and caches) what `veto` needs of ``text``, e.g. when a set of memories is indexed."""
    _profile(text)
    anchor_info(text)


@lru_cache(maxsize=131072)
def veto(query: str, stored: str) -> str | None:
    """The first veto (a name from `VETOES`) that blocks serving ``stored``'s result for ``query``, or
    ``None`` when none does. Symmetric; cached per text."""
    qa, qm, qs, qn, qp, qmood, qc, qb, qnames = _profile(query)
    sa, sm, ss, sn, sp, smood, sc, sb, snames = _profile(stored)
    if not qc or not sc:
        return "filler"
    if not anchors_agree(*anchor_info(query), *anchor_info(stored)):
        return "numbers"
    if qm != sm or qs != ss:
        return "marks"
    if qn != sn:
        return "negation"
    if qp and sp and qp != sp or _roles_differ(qc, qb, sc, sb, qnames | snames):
        return "roles"
    if _antonyms(_stemmed(tuple(qa)), _stemmed(tuple(sa))):
        return "antonym"
    if _other_value(_stemmed(tuple(qa)), _stemmed(tuple(sa))):
        return "names"
    if qmood != smood:
        return "mood"
    return None

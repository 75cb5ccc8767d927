"""What an intention means, as far as words show it: the normal form the lexical verifier compares.

Two intentions are taken to mean the same thing when one can be turned into the other by *equivalences* only:
dropping words without meaning (politeness, "could you", articles, the user's own pronouns: ``fillers.json``),
expanding contractions, writing a word one way where it has several spellings or abbreviations (``synonyms.json``:
"e-mail"/"email", "km"/"kilometre"; never two words of similar meaning, whose merge can change what a tool does:
recall across those comes from embeddings), inflection (Snowball stems), moving a free adverb ("today", "again"), and reordering role phrases ("to London from Paris").
Every other difference blocks the match: a content word with no equivalent on the other side (a name in any case,
a modifier, another verb, a unit), a number, the count of negations, the order of the words outside role phrases
(subject/object: "does Alice owe Bob" vs "does Bob owe Alice") and what each role marker binds ("from Paris",
"than B").

Because the equivalences are classes, "alignable with equivalences only" is the same as "equal normal forms":
`analyze` computes the normal form (`Meaning`), so a store can index memories by its digest
(`signature`) and a lookup finds its candidates without scoring every memory. `compare` says why two
intentions differ, `explain` how two equivalent ones differ in wording (for ``retrieve_memory``).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from promptcache.intention._numbers import CODE, NUMBER, canonical, clean, is_number, roman
from promptcache.intention._vocabulary import MULTIPLICATIVE_UNIT, Vocabulary, default_vocabulary, stem

__all__ = ["Analysis", "Meaning", "analyze", "compare", "explain", "signature"]

_TOKEN_RE = re.compile(rf"(?:{NUMBER})(?:st|nd|rd|th)?|{CODE}|[^\W_]+(?:'[^\W_]+)*|[$€£¥₹%&+#@]|[,.;:!?]", re.UNICODE)
_BOUNDARY = ","  # clause punctuation, one token: it closes an open role phrase
_ORDINALS = ("st", "nd", "rd", "th")
_SUFFIXES = {"'re": ("are",), "'ve": ("have",), "'ll": ("will",), "'d": ("would",), "'m": ("am",)}


@dataclass(frozen=True)
class Meaning:
    """An intention's normal form.

    Attributes:
        bare: content words outside role phrases, in order (stems or synonym class ids; numbers as digits).
        roles: ``(marker, argument words)`` pairs, sorted (the order of role phrases is free).
        free: free adverbs, sorted.
        negations: how many negations the intention holds.
        mood: ``"question"`` (a yes/no question: "is my transfer pending"), ``"statement"`` ("my transfer is
            pending") or ``""`` (a noun phrase, an imperative, a wh-question).
    """

    bare: tuple[str, ...]
    roles: tuple[tuple[str, tuple[str, ...]], ...]
    free: tuple[str, ...]
    negations: int
    mood: str = ""

    def words(self) -> Counter[str]:
        """Every content word (bare, role arguments, free adverbs) with its count."""
        out = Counter(self.bare)
        for _, arg in self.roles:
            out.update(arg)
        out.update(self.free)
        return out


@dataclass(frozen=True)
class Analysis:
    """A text's `Meaning` plus what the explanation needs: ``surface[key]`` is the text's own spelling of
    each normal-form word, ``dropped`` the words left out as fillers, ``synonyms`` the words replaced by their class."""

    meaning: Meaning
    surface: dict[str, str]
    dropped: tuple[str, ...]
    synonyms: dict[str, str]
    version: str


def _split(text: str, vocab: Vocabulary) -> list[tuple[str, bool]]:
    """Surface tokens ``(word, is_number)``: contractions expanded, possessives dropped, number words and Roman
    numerals (`promptcache.intention._numbers.roman`) as digits, a multiplicative as its number and "times", a
    currency symbol before its number moved after it."""
    text = clean(text).casefold()
    raw = _TOKEN_RE.findall(text)
    out: list[tuple[str, bool]] = []
    i = 0
    while i < len(raw):
        tok = raw[i]
        if tok in ",.;:!?":
            if out and out[-1][0] != _BOUNDARY:
                out.append((_BOUNDARY, False))
        elif tok in vocab.symbols:
            word = vocab.symbols[tok]
            if i + 1 < len(raw) and _is_number(raw[i + 1]):  # "$50" reads "50 dollar"
                out.append((_number(raw[i + 1]), True))
                i += 1
            out.append((word, False))
        elif _is_number(tok):
            out.append((_number(tok), True))
        elif tok in vocab.contractions:
            out.extend((w, False) for w in vocab.contractions[tok])
        elif tok.endswith("n't"):
            out.extend([(tok[:-3], False), ("not", False)])
        elif tok.endswith("'s"):
            out.append((tok[:-2], False))
        elif tok[-3:] in _SUFFIXES or tok[-2:] in _SUFFIXES:
            cut = 3 if tok[-3:] in _SUFFIXES else 2
            out.append((tok[:-cut], False))
            out.extend((w, False) for w in _SUFFIXES[tok[-cut:]])
        elif tok in vocab.numbers:
            out.append((vocab.numbers[tok], True))
        elif tok in vocab.multiplicatives:  # "twice" reads "2 times"
            out.extend([(vocab.multiplicatives[tok], True), (MULTIPLICATIVE_UNIT, False)])
        elif (numeral := roman(tok)) is not None:  # "chapter ii" reads "chapter 2"
            out.append((str(numeral), True))
        else:
            out.append((tok.replace("'", ""), False))
        i += 1
    return out


def _mood(toks: list[tuple[str, bool]], vocab: Vocabulary) -> str:
    """The mood of an intention (see `Meaning`), from its surface tokens."""
    words = [w for w, _ in toks if w != _BOUNDARY]
    start = 0
    skip = (vocab.free | vocab.filler_surface) - vocab.copulas - vocab.wh_words
    while start < len(words):
        if words[start] in skip:
            start += 1
            continue
        n = _skippable_phrase(words, start, vocab)
        if not n:
            break
        start += n
    if start >= len(words) or words[start] in vocab.wh_words:
        return ""
    nxt = words[start + 1] if start + 1 < len(words) else ""
    if words[start] in vocab.question_openers:
        return "" if nxt in vocab.addressee else "question"  # "could you ...": a polite request, no mood
    if any(w in vocab.copulas for w in words[start + 1 :]):
        return "statement"
    return ""


def _skippable_phrase(words: list[str], start: int, vocab: Vocabulary) -> int:
    """The length of a filler or free-adverb phrase at ``start`` ("right now", "for me"), else 0."""
    for n in range(min(vocab.longest_phrase, len(words) - start), 1, -1):
        class_id = vocab.phrases.get(tuple(stem(w) for w in words[start : start + n]))
        if class_id is not None and (not class_id or class_id in vocab.free):
            return n
    return 0


def _plural(word: str, stemmed: str) -> bool:
    """Whether ``word`` is the regular plural (or third-person -s form) of its stem: books, boxes, batteries."""
    if len(word) < 4 or word[-1] != "s" or word[-2:] in ("ss", "us", "is") or word == stemmed:
        return False
    return stem(word[:-1]) == stemmed or (word.endswith("es") and stem(word[:-2]) == stemmed)


def _is_number(token: str) -> bool:
    """Whether a token is a number, an ordinal suffix allowed ("3rd")."""
    return is_number(token[:-2] if token[-2:] in _ORDINALS else token) or is_number(token)


def _number(token: str) -> str:
    """The `canonical` number, an ordinal suffix kept ("1,000,000th" -> "1000000th", "1,5" as written)."""
    if token[-2:] in _ORDINALS and not is_number(token):
        return canonical(token[:-2]) + token[-2:]
    return canonical(token)


@lru_cache(maxsize=65536)
def _analyze(text: str) -> Analysis:
    return analyze_with(text, default_vocabulary())


def analyze(text: str) -> Analysis:
    """The `Analysis` of ``text`` with the package vocabulary (cached per text)."""
    return _analyze(text)


class _Walk:
    """The state of one walk over an intention's tokens (see `analyze_with`)."""

    __slots__ = (
        "aux_seen",
        "bare",
        "current",
        "dropped",
        "free",
        "negations",
        "opening",
        "prev",
        "roles",
        "surface",
        "synonyms",
    )

    def __init__(self) -> None:
        self.bare: list[str] = []
        self.roles: list[tuple[str, list[str]]] = []
        self.free: list[str] = []
        self.negations = 0
        self.surface: dict[str, str] = {}
        self.dropped: list[str] = []
        self.synonyms: dict[str, str] = {}
        self.current: list[str] | None = None  # the argument of the open role phrase
        self.prev = ""  # the previous surface word that was not a free adverb
        self.opening = True  # nothing but fillers so far (where "I want ..." is the form of a request)
        self.aux_seen = False  # a second do/does/did is the verb "do" ("how do you do currency exchanges")

    def add(self, key: str, word: str) -> None:
        """A content word (its normal-form ``key``) into the open role phrase, else the bare words."""
        (self.bare if self.current is None else self.current).append(key)
        self.surface.setdefault(key, word)

    def adverb(self, key: str, word: str) -> None:
        self.free.append(key)
        self.surface.setdefault(key, word)


def _phrase_at(w: _Walk, toks: list[tuple[str, bool]], stems: list[str], i: int, vocab: Vocabulary) -> int:
    """The length of the longest phrase of the vocabulary at ``i`` (fillers dropped, synonyms replaced by their
    class), recorded in ``w``; 0 when none starts there."""
    for n in range(min(vocab.longest_phrase, len(toks) - i), 1, -1):
        class_id = vocab.phrases.get(tuple(stems[i : i + n]))
        if class_id is None:
            continue
        phrase = " ".join(t for t, _ in toks[i : i + n])
        if not class_id:
            w.dropped.append(phrase)
        elif class_id in vocab.free:
            w.adverb(class_id, phrase)
        else:
            w.opening = False
            w.synonyms[class_id] = phrase
            w.add(class_id, phrase)
        w.prev = toks[i + n - 1][0]
        return n
    return 0


def _function_word(w: _Walk, word: str, key_word: str, nxt: str, after_number: bool, vocab: Vocabulary) -> bool:
    """Whether ``word`` is a number or a function word (negation, request form, auxiliary, tense, modal, filler,
    role marker), recorded in ``w``."""
    if after_number:
        w.add(key_word, word)
    elif word in vocab.negations:
        w.negations += 1
    elif (word in vocab.tense or word in vocab.modals) and nxt in vocab.addressee:
        w.dropped.append(word)  # "could you", "will you": a polite request
    elif word in vocab.request_verbs and w.opening and w.prev in vocab.first_person | {"would"}:
        w.dropped.append(word)  # "I want ...", "I'd like ...": the form of a request
    elif word in vocab.imperatives and w.opening:
        w.dropped.append(word)  # "show me ...", "can you find ...": the form of a request
    elif word in vocab.auxiliaries and nxt and nxt not in vocab.markers and not w.aux_seen and w.prev != "to":
        w.aux_seen = True
        w.dropped.append(word)  # "do I have": an auxiliary ("did" still marks the past)
        if word in vocab.tense:
            w.adverb(vocab.tense[word], word)
    elif word in vocab.tense:
        w.adverb(vocab.tense[word], word)
    elif word in vocab.modals:
        w.add(vocab.modals[word], word)
    elif word in vocab.filler_surface or (word == "to" and w.prev in vocab.infinitive_heads):
        w.dropped.append(word)  # a filler; "want to", "remind me to": a verb follows, not a role
    elif word in vocab.markers:
        w.current = []
        w.roles.append((word, w.current))
    else:
        return False
    return True


def _content_word(w: _Walk, word: str, key_word: str, after_digit: bool, vocab: Vocabulary) -> None:
    class_id = vocab.classes.get(key_word, key_word)
    if _plural(word, key_word) and not after_digit:  # "50 dollars" is "$50"
        class_id += "+s"  # number is meaning: "cancel my order" is not "cancel my orders"
    if class_id != key_word:
        w.synonyms[class_id] = word
    w.add(class_id, word)


def _word_at(w: _Walk, toks: list[tuple[str, bool]], stems: list[str], i: int, vocab: Vocabulary) -> None:
    """Records the single token at ``i`` in ``w``."""
    word, is_num = toks[i]
    if word == _BOUNDARY:  # "transfer to savings, 200 dollars": the role phrase ends at the comma
        w.current, w.prev, w.aux_seen = None, "", False
        return
    key_word = stems[i]
    nxt = toks[i + 1][0] if i + 1 < len(toks) else ""
    after_digit = bool(i and toks[i - 1][1])
    before = len(w.dropped)
    numeric = is_num or (word in vocab.after_number and after_digit)
    if not _function_word(w, word, key_word, nxt, numeric, vocab):
        if word in vocab.free:
            w.adverb(key_word, word)
            return  # a free adverb neither ends a role phrase nor counts as the previous word
        _content_word(w, word, key_word, after_digit, vocab)
    if len(w.dropped) == before or word in vocab.auxiliaries:
        w.opening = False
    w.prev = word


def analyze_with(text: str, vocab: Vocabulary) -> Analysis:
    """The `Analysis` of ``text`` under ``vocab`` (see the module docstring for the rules): phrases first, longest
    match; then each word by its kind."""
    toks = _split(text, vocab)
    stems = [t if num else stem(t) for t, num in toks]
    w = _Walk()
    i = 0
    while i < len(toks):
        n = _phrase_at(w, toks, stems, i, vocab)
        if not n:
            _word_at(w, toks, stems, i, vocab)
            n = 1
        i += n
    meaning = Meaning(
        bare=tuple(w.bare),
        roles=tuple(sorted((m, tuple(a)) for m, a in w.roles)),
        free=tuple(sorted(w.free)),
        negations=w.negations,
        mood=_mood(toks, vocab),
    )
    return Analysis(meaning, w.surface, tuple(w.dropped), w.synonyms, vocab.version)


NORMAL_FORM_VERSION = "m4"
"""The version of the rules that make the normal form, the first part of every signature's version: raised when
a rule changes what a text's normal form is, so that memories indexed under the old rules are re-indexed on read
like those of an old vocabulary (`promptcache.intention._lookup`). ``m2``: a number is one token with everything
that changes its value (`promptcache.intention._numbers`; under ``m1`` "1,5" and ".5" read "15" and "5"). ``m3``: zeros are kept ("007" is not "7", "3.10" is not
"3.1"), a dash before a digit is a minus sign ("–5") and every script's decimal digits read as ASCII digits. ``m4``:
a Roman numeral is a number ("chapter ii" reads "chapter 2", `promptcache.intention._numbers.roman`) and a
multiplicative is its number and "times" ("twice" reads "2 times"; under ``m3`` both were words)."""


def signature(text: str) -> str:
    """A digest of ``text``'s normal form (``"<NORMAL_FORM_VERSION>-<vocabulary version>-<20 hex>"``): equal for
    two intentions exactly when `compare` finds them equivalent (under the same rules and vocabulary)."""
    return _signature(text)


@lru_cache(maxsize=65536)
def _signature(text: str) -> str:
    a = analyze(text)
    m = a.meaning
    body = repr((m.bare, m.roles, m.free, m.negations, m.mood)).encode("utf-8")
    return f"{NORMAL_FORM_VERSION}-{a.version}-{hashlib.sha256(body).hexdigest()[:20]}"


def _phrase(role: tuple[str, tuple[str, ...]], surface: dict[str, str]) -> str:
    return " ".join([role[0], *(surface.get(w, w) for w in role[1])])


def compare(a: str, b: str) -> str | None:
    """``None`` when ``a`` and ``b`` are equivalent, else why not (one short sentence naming the difference)."""
    x, y = analyze(a), analyze(b)
    mx, my = x.meaning, y.meaning
    if mx == my:
        return None
    if mx.negations != my.negations:
        return f"negation differs ({mx.negations} vs {my.negations})"
    if mx.mood != my.mood:
        return f"mood differs ({mx.mood or 'none'} vs {my.mood or 'none'})"
    wx, wy = mx.words(), my.words()
    only_x, only_y = wx - wy, wy - wx
    if only_x or only_y:
        side, other, an = (only_x, a, x) if only_x else (only_y, b, y)
        word = sorted(side)[0]
        return f"{an.surface.get(word, word)!r} in {other!r} has no equivalent in the other"
    if mx.roles != my.roles:
        rx = ", ".join(_phrase(r, x.surface) for r in mx.roles)
        ry = ", ".join(_phrase(r, y.surface) for r in my.roles)
        return f"roles differ: {rx or '-'!r} vs {ry or '-'!r}"
    if mx.bare != my.bare:
        bx = " ".join(x.surface.get(w, w) for w in mx.bare)
        by = " ".join(y.surface.get(w, w) for w in my.bare)
        return f"word order differs: {bx!r} vs {by!r}"
    return "free adverbs differ"  # pragma: no cover - words() equal and roles/bare equal imply equal free


def explain(query: str, stored: str) -> str:
    """How the equivalent ``stored`` intention is worded differently from ``query``, for a person or a model to
    check, e.g. ``"the earlier one adds 'please'; 'switch off' for your 'turn off'"``; ``"case and punctuation
    only"`` when nothing else differs, ``"word order"`` when only that does."""
    q, s = analyze(query), analyze(stored)
    parts = []
    extra_s = sorted(set(s.dropped) - set(q.dropped))
    extra_q = sorted(set(q.dropped) - set(s.dropped))
    if extra_s:
        parts.append("the earlier one adds " + ", ".join(repr(w) for w in extra_s))
    if extra_q:
        parts.append("yours adds " + ", ".join(repr(w) for w in extra_q))
    for class_id in sorted(set(q.synonyms) | set(s.synonyms)):
        sq, ss = q.surface.get(class_id), s.surface.get(class_id)
        if sq and ss and sq != ss:
            parts.append(f"{ss!r} for your {sq!r}")
    q_words = [w for w, _ in _split(query, default_vocabulary()) if w != _BOUNDARY]
    s_words = [w for w, _ in _split(stored, default_vocabulary()) if w != _BOUNDARY]
    if not parts and q_words != s_words:
        parts.append("word order" if sorted(q_words) == sorted(s_words) else "inflection or contractions")
    return "; ".join(parts) if parts else "case and punctuation only"

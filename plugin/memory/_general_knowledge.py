"""Question shapes: is a question *clearly* general knowledge, and does it continue an earlier turn?

Two detectors used by the load decision (:mod:`promptcache.memory._classifier`); both work on one question's text
and use the word lists of :mod:`promptcache.memory._vocabulary`.

:func:`general_form` names the general-knowledge *form* a question has, or returns ``None``. The forms are the
ones English uses to ask about kinds of things rather than about one particular thing:

- ``definitional``: "What is a/an ...", "What is <bare noun phrase>", "What does ... mean/do/stand for", "What is
  the <aspect> of/between ... " (the aspect not being a state of work: status, plan, deadline, ...);
- ``explanatory``: "How/Why does/do/is/are/can ...", "What causes/makes/happens when ...", imperative requests for
  an explanation ("Explain ...", "Describe ...", "Tell me about ...", "Can you explain ...");
- ``generic_advice``: "Is it safe/better/worth ... to", "When should you ...", "How long/often should ...",
  "Should one ...", yes/no questions about a bare plural ("Can lawyers reject jurors?": a kind, not one thing;
  not with a definite "the ..." in it: "Do customers have access to the beta?");
- ``trivia``: "Who invented/wrote/painted ...", "When did/was ...", "Which <noun> is the <superlative> ...",
  "How many <noun> are in a/the ...".

A question outside these forms is never called general knowledge (the default errs toward loading).

:func:`followup_signals` lists the signs that a question leans on an earlier turn: an elliptical opener ("And
...", "What about ...", "Any news?"), an anaphoric pronoun in its first clause ("it", "they", "that one", "the
second one"; "it" not when expletive: "is it safe to ..."), a deictic "this <noun>", an elliptical tail ("...
too?", "... again?", "Can you give an example?"), an explanation request with nothing to explain ("Explain why."), a bare definite with no complement ("What was the result?":
which result?), or a fragment without a verb of at most four words ("Which gate?", "Enough for the offsite?").

:func:`open_definites` and :func:`new_references` find the definite phrases that do not identify their referent by
themselves ("the retry") and the particulars a follow-up brings in ("does *the plant* use it?"); the load decision
uses them with the conversation (:mod:`promptcache.memory._classifier`). A definite target of "what is the <aspect>
of/for/in ..." must identify itself too ("the capital of Canada", not "the cause of the latency spike"), and a bare
singular target of "for/in" reads as a local label ("the churn for enterprise").
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from promptcache.memory._vocabulary import (
    ANAPHORIC_PRONOUNS,
    APOSTROPHE_LESS,
    AUXILIARIES,
    ELLIPTICAL_OPENERS,
    ELLIPTICAL_TAILS,
    EXPLANATORY_OPENERS,
    MONTHS,
    REQUEST_FRAMES,
    RULE_NOUNS,
    STATE_ATTRIBUTES,
    STATE_WORDS,
    TOPIC_OPENERS,
    TRIVIA_VERBS,
    WEEKDAYS,
)

__all__ = ["alternation", "followup_signals", "general_form", "new_references", "normalise_question", "open_definites"]

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of ``words`` (longest first; a space inside an entry also matches a hyphen or more
    spaces), for use inside ``\\b(?:...)\\b``."""
    ordered = sorted(set(words), key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"[\s-]+") for w in ordered)


_GREETING = re.compile(r"^(?:(?:hi|hello|hey|quick question|question|please)\b[\s,:;.!-]*)+", re.I)
_FRAME = re.compile(rf"^(?:{alternation(REQUEST_FRAMES)})\b[\s,:]*", re.I)


_NO_APOSTROPHE = re.compile(rf"\b(?:{alternation(APOSTROPHE_LESS)})\b", re.I)


def normalise_question(question: str) -> str:
    """Straight quotes, contractions typed without their apostrophe restored ("whats" -> "what's",
    :data:`~promptcache.memory._vocabulary.APOSTROPHE_LESS`), whitespace runs collapsed, stripped (case kept:
    capitals mark names)."""
    text = " ".join(question.translate(_QUOTES).split())
    return _NO_APOSTROPHE.sub(lambda m: _keep_case(m.group(0), APOSTROPHE_LESS[m.group(0).lower()]), text)


def _keep_case(typed: str, spelled: str) -> str:
    return spelled[0].upper() + spelled[1:] if typed[0].isupper() else spelled


def _core(question: str) -> str:
    """The question without a greeting or a request frame around it ("Hi! I was wondering, how does ..."), its
    first letter put back in capitals when the frame was cut."""
    text = normalise_question(question)
    core = _FRAME.sub("", _GREETING.sub("", text))
    if core != text and core:
        core = core[0].upper() + core[1:]
    return core or text


_AUX = alternation(AUXILIARIES)
_DET = r"(?:the|this|that|these|those|my|our|your|their|his|her|its)"
_STATE_ATTR = re.compile(rf"\b(?:{alternation(STATE_ATTRIBUTES)})\b", re.I)
_STATE_ANYWHERE = re.compile(rf"\b(?:{alternation(STATE_WORDS)})\b", re.I)
_STATE_WORD = re.compile(rf"^(?:{alternation(STATE_WORDS)})\b|^\w+(?:ed|ing)\b", re.I)
_COMPLEMENT = r"(?:of|between|for|in|behind|to|from|among|versus|vs)"

_DEFINITE_ASPECT = re.compile(
    rf"^what(?:'s| is| are| was| were) the ((?:[\w'-]+ ){{0,3}}?)({_COMPLEMENT})\b\s*(\S*)", re.I
)  # "what is the capital of ...": the words before the complement are the aspect asked about
_RULE = re.compile(rf"\b(?:{alternation(RULE_NOUNS)})\b", re.I)
_RELATIONAL = frozenset({"for", "in"})
"""Relational complements ("the <aspect> for/in X"). "Of/between" mark an inherent property ("the capital of ...",
"the difference between ..."); "for/in" mark a value assigned to a target ("the budget for ...", "the churn in
..."), general knowledge only when the target is a kind (:data:`_KIND_TARGET`). ("To" is left out: it is mostly an
infinitive, "the best way to learn ...".)"""
_KIND_TARGET = re.compile(
    r"^(?:(?:a|an|any|every|each|all|most|people|someone|you|one)\b|[A-Z0-9]|[a-z][\w-]*(?:s|ing)\W*$)"
)
"""A kind or a public name as target: an indefinite or quantified phrase, a generic pronoun, a capitalised name or
number, a bare plural or an activity ("for naming ..."); a definite target ("for the flu", "for the enterprise
tier") only when it identifies itself (:func:`open_definites` finds nothing in it). A bare lowercase singular ("for
enterprise", "in checkout") is read as the label of a local segment. Source: English article usage, kinds being
named by indefinites, bare plurals and mass nouns; the last read the local way (the safe side).
"""
_INDEFINITE = re.compile(r"^what(?:'s| is| are| was| were) (?:a|an)\b", re.I)
_BARE = re.compile(
    rf"^what(?:'s| is| are) (?!{_DET}\b|a\b|an\b|there\b|it\b|up\b|new\b|next\b|on\b|in\b|at\b)(\S+)", re.I
)
_NAMED_CONCEPT = re.compile(r"^[Ww]hat(?:'s| is| are| was) the [A-Z][\w'-]* [\w'-]+\s*[?.!]*$")
_WHAT_DOES = re.compile(
    r"^what (?:does|do) .+ (?:mean|do|stand for|represent|involve|measure|refer to)\b|^what is meant by\b", re.I
)
_EXPLAIN = re.compile(
    rf"^(?:how|why) (?:does|do|is|are|can|could|would|did|was|were)\b|"
    rf"^what (?:causes|makes|determines|affects|happens (?:when|if))\b|^(?:please )?(?:{alternation(EXPLANATORY_OPENERS)})\b",
    re.I,
)
_ADVICE = re.compile(
    r"^(?:is|isn't|would) it (?:\w+ ){0,2}?(?:safe|better|worse|possible|worth|ok|okay|normal|bad|good|healthy|"
    r"necessary|legal|true|wise|common|easy|hard|expensive|cheaper|advisable)\b|"
    r"^(?:when|how|where) should (?:you|one|people|a|an|i)\b|^should (?:you|one|people|a|an)\b|"
    r"^(?:when|how long|how often|how much|how many|how far) (?:should|does|do|can|is|are) (?:you|one|it (?:\w+ )?take|people|a|an)\b|"
    r"^(?:when|where|why|how) (?:is|are|was|were) (?:a|an)\b|"
    r"^what(?:'s| is) (?:the|a) (?:good|best|right|easiest|fastest|quickest|healthiest|safest) way\b",
    re.I,
)
_GENERIC_PLURAL = re.compile(  # case-sensitive: a capitalised word is a name, not a kind
    rf"^(?:do|does|can|could|are|is|should|will) (?!{_DET}\b|it\b|we\b|i\b|you\b|they\b|he\b|she\b|there\b|any\w*\b|"
    rf"some\w*\b|every\w*\b|no\w*\b)(?:[a-z][\w-]* ){{0,2}}?[a-z][\w-]*[^s\W]s\b(?! ['])",
)
_KIND_SUBJECT = re.compile(r"^(?:is|are|can|could|does|do|should|would|will|was) (?:a|an) [a-z][\w-]*\b", re.I)
"""A yes/no question about an indefinite singular ("Is a tomato a fruit?", "Can a dog eat grapes?"): a kind, like a
bare plural; not when it states where something stands ("Is a fix planned?": a participle or a state word)."""
_DATE = re.compile(rf"\b(?:{alternation(WEEKDAYS + MONTHS)})\b", re.I)
_PARTICIPLE = re.compile(r"\b\w+(?:ed|en)\b", re.I)
_TOPIC = re.compile(rf"^(?:{alternation(TOPIC_OPENERS)})\b", re.I)
_PAST_NAMED = re.compile(r"^(?:[Ww]hy|[Hh]ow|[Ww]hen) (?:did|was|were|has|had) [A-Z][a-z]")
"""A past event of a bare name ("Why did Sam leave?"): one particular person or thing, not general knowledge."""
_TRIVIA = re.compile(
    rf"^who (?:was |were |is )?(?:the )?(?:{alternation(TRIVIA_VERBS)})\b|^when (?:did|was|were)\b|"
    r"^(?:which|what) [\w-]+(?: [\w-]+)? (?:is|are|was|were) the (?:\w+est|most \w+|least \w+)\b|"
    r"^what(?:'s| is| are| was| were) the (?:\w{2,}est|most [a-z]+|least [a-z]+) "
    r"[a-z][\w-]*(?: [a-z][\w-]*)? (?:in|of|on) (?:the|a|an)\b|"
    r"^how (?:many|much) [\w-]+(?: [\w-]+)? (?:is|are) (?:there )?in (?:a|an|the)\b|"
    r"^how (?:many|much) [\w-]+(?: [\w-]+)? (?:does|do) (?:a|an|the)\b",
    re.I,
)

_EXPLAIN_REQUEST = re.compile(rf"^(?:please )?(?:{alternation(EXPLANATORY_OPENERS)})\b", re.I)
_OPENER = re.compile(rf"^(?:{alternation(ELLIPTICAL_OPENERS)})\b", re.I)
_TAIL = re.compile(rf"\b(?:{alternation(ELLIPTICAL_TAILS)})\s*[?.!]*$", re.I)
_PRONOUN = re.compile(rf"\b(?:{alternation(ANAPHORIC_PRONOUNS)})\b", re.I)
_IT = re.compile(r"\bit\b", re.I)
_EXPLETIVE_IT = re.compile(
    r"\bit(?:'s| is| was| would be| seems| looks)(?: \w+){0,3}? (?:to|that|whether|if)\b|"
    r"\b(?:is|was|would|isn't) it (?:\w+ ){0,3}?(?:to|that|whether|if|for)\b|\bit takes? (?:\w+ ){0,3}?to\b|\bdoes it matter\b|"
    r"\bwhat time is it\b|\bdoes it mean (?:when|if|that|to)\b|\bdoes it (?:\w+ )?take (?:\w+ ){0,3}?to\b",
    re.I,
)
_THAT_PRONOUN = re.compile(
    r"\b(?:is|was|are|were|does|did|do|will|would|can|could|about|of|with|for|than|like|take|on|from|after|before)"
    r" that\b(?! (?:a|an|the|you|i|we|they|he|she|it|there|this|is|are)\b)|^that\b|\b(?:that|this)\s*[?.!]*$",
    re.I,
)
_DEICTIC = re.compile(r"\bthis (?!is\b|was\b|means\b|one\b)[a-z]", re.I)
_BARE_DEFINITE = re.compile(r"^what(?:'s| is| was| are| were) the [\w-]+\s*[?.!]*$", re.I)
_CLAUSE = re.compile(r"\s(?:and|or|but|because|so|when|if|while)\s|[,;:]\s")
_HAS_AUX = re.compile(rf"\b(?:{_AUX})\b|'s\b|'re\b", re.I)


def general_form(question: str) -> str | None:
    """The general-knowledge form of ``question`` (``"definitional"``, ``"explanatory"``, ``"generic_advice"``,
    ``"trivia"``), or ``None`` when it has none (module docstring). Says nothing about work signals: a question
    can have a general form and still name the user's work ("How does *our* deploy work?")."""
    text = _core(question)
    if _PAST_NAMED.match(text):
        return None
    aspect = _DEFINITE_ASPECT.match(text)
    if aspect:
        if _STATE_ATTR.search(aspect.group(1)):
            return None
        if _RULE.search(aspect.group(1)) and aspect.group(2).lower() in {"for", "to", "in"}:
            return None  # "the process for requesting leave": whose process? the asker's organisation's
        target = text[aspect.start(3) :]
        definite = target.lower().startswith("the ")
        superlative = re.match(r"(?:\w{2,}est|most|least)\b", aspect.group(1), re.I)  # one of a domain: "in the world"
        kind = bool(superlative or not open_definites(target)) if definite else _KIND_TARGET.match(aspect.group(3))
        if (aspect.group(2).lower() in _RELATIONAL or definite) and not kind:
            return None  # "the churn for enterprise": a value set for a local segment, not a kind's property
        return "definitional"
    if _INDEFINITE.match(text) or _WHAT_DOES.match(text) or _NAMED_CONCEPT.match(text):
        return "definitional"
    bare = _BARE.match(text)
    if bare and not _STATE_WORD.match(bare.group(1)):
        return "definitional"
    if _ADVICE.match(text):
        return "generic_advice"
    if _EXPLAIN.match(text):
        return "explanatory"
    if _TRIVIA.match(text):
        return "trivia"
    if _TOPIC.match(text):
        return "definitional"
    if _KIND_SUBJECT.match(text) and not (
        _PARTICIPLE.search(text) or _STATE_ANYWHERE.search(text) or _DATE.search(text)
    ):
        return "generic_advice"
    if _GENERIC_PLURAL.match(text[:1].lower() + text[1:]) and not re.search(r"\bthe\b", text, re.I):
        return "generic_advice"
    return None


def _first_clause(text: str) -> str:
    return _CLAUSE.split(text, maxsplit=1)[0]


def followup_signals(question: str) -> list[str]:
    """The signs that ``question`` continues an earlier turn (names; empty = it stands on its own)."""
    text = _core(question)
    found = []
    if _OPENER.match(text):
        found.append("elliptical_opener")
    first = _first_clause(text)
    it = _IT.search(first) and not _EXPLETIVE_IT.search(text)
    if it or _PRONOUN.search(first) or _THAT_PRONOUN.search(first):
        found.append("anaphora")
    if _DEICTIC.search(text):
        found.append("deictic")
    if _TAIL.search(text):
        found.append("elliptical_tail")
    if _BARE_DEFINITE.match(text) and not _NAMED_CONCEPT.match(text):
        found.append("bare_definite")
    words = re.findall(r"[\w'-]+", text)
    opener = _EXPLAIN_REQUEST.match(text)
    rest = {w.lower() for w in re.findall(r"[\w'-]+", text[opener.end() :])} if opener else set()
    if opener and rest <= {"why", "how", "that", "this", "it", "them", "more", "further", "again", "please", "so"}:
        found.append("elliptical_request")  # "Explain why.", "Can you explain?": explain what?
    if 0 < len(words) <= 4 and not _HAS_AUX.search(text) and general_form(text) is None:
        found.append("fragment")
    return found


_THE = re.compile(r"\bthe\s+((?:[\w'-]+\s*){1,3})", re.I)
_SELF_ANCHORED = frozenset(
    {"of", "between", "among", "versus", "vs", "first", "second", "third", "last", "only", "most", "least", "same"}
)
_METALINGUISTIC = frozenset("word term phrase expression name letter number symbol prefix suffix idiom".split())
"""Nouns followed by the thing they name ("the word quarantine", "the number 7"): the phrase identifies itself."""
_NOT_A_SUBJECT = frozenset(
    "i you we they he she it this that these those there here much many long often far old else one people "
    "someone anyone everyone everybody nobody something anything everything".split()
)
_EMBEDDED_SUBJECT = re.compile(  # not at the start: "how efficient are they?" is a degree question
    r"(?<=\S)\s+(?:how|what|where|why|when|whether|if)\s+([a-z][a-z-]*)\s+"
    r"(?:is|are|was|were|does|do|did|has|have|gets?|uses?)\b"
)
_SUBJECT_DEFINITE = re.compile(
    r"^(?:does|did|do|is|was|are|has|have|can|could|will|would)\s+the\s+|"
    r"(?<=\S)\s+(?:how|what|where|why|when|whether|if)\s+the\s+",
    re.I,
)
_YES_NO_SUBJECT = re.compile(
    r"^(?:does|did|is|was|has|can|will|would)\s+([a-z][a-z-]*)\s+(?:[\w-]+\s+)?(?:it|that|this|one|them)\b"
)


def _stem(word: str) -> str:
    word = word.lower().strip("'")
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def open_definites(question: str) -> list[str]:
    """Definite noun phrases of ``question`` that do not identify their referent by themselves: "the" + lower-case
    words with no name or number in them, no complement ("the capital *of* ...", "the difference *between* ..."),
    no superlative or ordinal ("the largest planet", "the first one"), not the complement of another phrase ("the
    main ideas of the saga pattern"), not a self-naming phrase ("the word quarantine"). A definite presupposes a
    referent the hearer can identify; when the phrase does not, it must come from the conversation or the asker's
    situation (the familiarity account of definiteness). Returns the phrases' words (up to three each), lower
    case."""
    text = _core(question)
    found = []
    for match in _THE.finditer(text):
        words = re.findall(r"[\w'-]+", match.group(1))
        if not words or any(w[0].isupper() or w[0].isdigit() for w in words):
            continue
        if re.search(r"\b(?:of|between|among)\s+$", text[: match.start()], re.I):
            continue  # inside another phrase's complement ("the main ideas of the saga pattern"): part of it
        lowered = [w.lower() for w in words]
        appositive = lowered[0] in _METALINGUISTIC and len(lowered) > 1  # "the word quarantine": it names itself
        if any(w in _SELF_ANCHORED for w in lowered) or lowered[0].endswith("est") or lowered[0] in AUXILIARIES:
            continue
        if appositive or (lowered[0] in _METALINGUISTIC and re.match(r"\s*['\"]", text[match.end() :])):
            continue
        found.append(" ".join(lowered))
    return found


def new_references(question: str, previous: str) -> list[str]:
    """Referents ``question`` brings in that ``previous`` (the turn it follows) did not mention: an open definite
    (:func:`open_definites`) as the subject, none of whose words occurs in ``previous``, and a bare lower-case
    singular subject ("is that how *prod* is set up?", "does *staging* use it?"): a bare singular count noun is a
    name for one local thing, where a kind would be a plural or take "a". Mass nouns read the same way and load
    (the safe side). Returns the phrases (lower case); empty = nothing new."""
    seen = {_stem(w) for w in re.findall(r"[\w'-]+", previous)}
    text = _core(question)
    subject = _SUBJECT_DEFINITE.search(text)  # only a definite in subject position: "does the plant use it?", not
    # "does it work at the poles?" (a place the concept is asked about)
    phrases = open_definites(text[subject.end() - 4 :]) if subject else []
    found = [p for p in phrases[:1] if not {_stem(w) for w in p.split()} & seen]
    lowered = text[:1].lower() + text[1:]
    for match in (*_EMBEDDED_SUBJECT.finditer(lowered), *_YES_NO_SUBJECT.finditer(lowered)):
        word = match.group(1)
        if word not in _NOT_A_SUBJECT and word not in AUXILIARIES and _stem(word) == word and _stem(word) not in seen:
            found.append(word)
    return found

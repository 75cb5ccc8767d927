"""Question shapes: is a question *clearly* general knowledge, and does it continue an earlier turn?

Two detectors used by the load decision (:mod:`promptcache.memory.classifier`); both work on one question's text
and use the word lists of :mod:`promptcache.memory.vocabulary`.

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
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from promptcache.memory.vocabulary import (
    ANAPHORIC_PRONOUNS,
    AUXILIARIES,
    ELLIPTICAL_OPENERS,
    ELLIPTICAL_TAILS,
    EXPLANATORY_OPENERS,
    REQUEST_FRAMES,
    STATE_ATTRIBUTES,
    STATE_WORDS,
    TOPIC_OPENERS,
    TRIVIA_VERBS,
)

__all__ = ["alternation", "followup_signals", "general_form", "normalise_question"]

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def alternation(words: Iterable[str]) -> str:
    """A regex alternation of ``words`` (longest first; a space inside an entry also matches a hyphen or more
    spaces), for use inside ``\\b(?:...)\\b``."""
    ordered = sorted(set(words), key=len, reverse=True)
    return "|".join(re.escape(w).replace(r"\ ", r"[\s-]+") for w in ordered)


_GREETING = re.compile(r"^(?:(?:hi|hello|hey|quick question|question|please)\b[\s,:;.!-]*)+", re.I)
_FRAME = re.compile(rf"^(?:{alternation(REQUEST_FRAMES)})\b[\s,:]*", re.I)


def normalise_question(question: str) -> str:
    """Straight quotes, whitespace runs collapsed, stripped (case kept: capitals mark names)."""
    return " ".join(question.translate(_QUOTES).split())


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
_STATE_WORD = re.compile(rf"^(?:{alternation(STATE_WORDS)})\b|^\w+(?:ed|ing)\b", re.I)
_COMPLEMENT = r"(?:of|between|for|in|behind|to|from|among|versus|vs)"

_DEFINITE_ASPECT = re.compile(
    rf"^what(?:'s| is| are| was| were) the ((?:[\w'-]+ ){{0,3}}?){_COMPLEMENT}\b", re.I
)  # "what is the capital of ...": the words before the complement are the aspect asked about
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
_TOPIC = re.compile(rf"^(?:{alternation(TOPIC_OPENERS)})\b", re.I)
_PAST_NAMED = re.compile(r"^(?:[Ww]hy|[Hh]ow|[Ww]hen) (?:did|was|were|has|had) [A-Z][a-z]")
"""A past event of a bare name ("Why did Sam leave?"): one particular person or thing, not general knowledge."""
_TRIVIA = re.compile(
    rf"^who (?:was |were |is )?(?:the )?(?:{alternation(TRIVIA_VERBS)})\b|^when (?:did|was|were)\b|"
    r"^(?:which|what) [\w-]+(?: [\w-]+)? (?:is|are|was|were) the (?:\w+est|most \w+|least \w+)\b|"
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
        return None if _STATE_ATTR.search(aspect.group(1)) else "definitional"
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

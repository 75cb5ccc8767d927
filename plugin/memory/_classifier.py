"""Does this turn need the user's project state? The load decision of typed memory, from the conversation.

Project-state lookups are skipped for purely general-knowledge ("conceptual") questions ("What is the difference
between supervised and reinforcement learning?"): no ETA or task progress is needed to answer them. A wrong
"conceptual" costs a wrong answer (project state the answer needed is not loaded); a wrong "not conceptual" only
costs tokens. So the default calls a question conceptual only when it is *clearly* general knowledge:

1. it shows no sign of someone's current work (:func:`work_signals`): first person outside a generic how-to;
   a definite or possessive reference to a work object ("the hotfix", "the Acme deal", "your order"), to one
   particular instance ("the new pricing", "the current plan") or to a team/organisation ("the team", "the retro", "legal", "the night shift"); a state attribute after a determiner
   ("the status", "the deadline", "the next steps"); a work object with a word for its state ("tickets still
   open"); a time anchor (today, this week, last night's, on Friday, in March, Q2); status phrasing ("status of",
   "how is ... going", "where do things stand"); an identifier (``#42``, ``ABC-123``, "order 42"); a work noun
   as a bare subject ("Why is staging slow?", "How do refunds work?");
2. and it does not continue an earlier turn (:func:`~promptcache.memory._general_knowledge.followup_signals`:
   "And what is blocking it?", "What about the second one?", "Any news?") -- a follow-up inherits the decision of
   the turn it follows, and a follow-up with no earlier turn loads. With the conversation: after a turn that
   loaded, an open definite ("How does *the retry* work?") is read as pointing into it (a follow-up); a follow-up
   of a general turn that brings in a new particular ("Does *the plant* use it?", "Is that how *prod* is set
   up?") does not inherit, it loads;
3. and it has a general-knowledge form (:func:`~promptcache.memory._general_knowledge.general_form`: definitional,
   explanatory, generic advice, trivia). Anything else loads.

:func:`is_conceptual_question` takes the earlier turns (``history``) to apply rule 2. :func:`make_classifier`
accepts this default, any callable (``f(question)``, or ``f(question, history=...)`` to see the earlier turns), or
a LangChain chat model (:class:`ChatModelClassifier`: asked a one-word question with the recent turns; sync and
async).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from promptcache._log import ThrottledWarning, get_logger
from promptcache.memory._general_knowledge import (
    alternation,
    followup_signals,
    general_form,
    new_references,
    normalise_question,
    open_definites,
)
from promptcache.memory._vocabulary import (
    INSTANCE_MODIFIERS,
    MONTHS,
    ORG_NOUNS,
    REQUEST_FRAMES,
    STATE_ATTRIBUTES,
    STATE_WORDS,
    TIME_ANCHORS,
    WEEKDAYS,
)
from promptcache.memory._vocabulary import WORK_NOUNS as _WORK_NOUN_LIST

__all__ = [
    "ChatModelClassifier",
    "ConceptualClassifier",
    "MAX_QUESTION_CHARS",
    "Turn",
    "as_turns",
    "content_text",
    "is_conceptual_question",
    "make_classifier",
    "takes_history",
    "work_signals",
]

ConceptualClassifier = Callable[..., bool]
"""``f(question)`` or ``f(question, history=[...])`` -> True when it is conceptual (no project state needed)."""

Turn = tuple[str, str]
"""One earlier turn of the conversation: ``(role, text)``, role ``"user"`` or ``"assistant"``."""

HISTORY_TURNS = 8
"""How many earlier user turns the default rules walk to decide what a follow-up inherits (a chain of follow-ups
longer than this loads; the choice errs toward loading)."""

_WORK_NOUNS = alternation(_WORK_NOUN_LIST)
_GENERIC_I = re.compile(
    r"\b(?:how|when|why|where|what)\s+(?:do|can|should|would|could|might)\s+i\b|"
    r"\b(?:should|can|could|would|may|might)\s+i\b|\bwhat if i\b|\bif i\b|\blike i'm\s+(?:five|5|a child)\b|"
    r"\b(?:tell|show|give|help|teach)\s+me\b|"
    rf"\b(?:{alternation(REQUEST_FRAMES)})\b",
    re.I,
)
_ONGOING = re.compile(
    r"^(?:how|why)(?: is| are|'s| isn't| aren't) (?:[\w'-]+ ){1,4}?[\w-]+ing\b|"
    r"^(?:what|who|which)(?: is| are|'s) (?:[\w'-]+ ){1,3}?[\w-]+ing (?:on|about|for|with|to|at|from|into)\s*[?.!]*$",
    re.I,
)
"""Present progressive ("How are sales tracking?", "Why are customers complaining?", "What is Jane working on?": a
what/who question with the preposition left at the end): an ongoing, particular situation; general-knowledge
questions use the simple present ("Why is the sky blue?")."""
_PLACE = re.compile(
    r"\b(?:here|around here|at this company|in this company|at work|in the office)\b(?! is\b| are\b)", re.I
)
_INSTANCE = re.compile(rf"\bthe\s+(?:{alternation(INSTANCE_MODIFIERS)})\s+[\w-]+", re.I)
_FIRST_PERSON = re.compile(r"\b(?:my|our|ours|mine|we|we're|we've|we'd|us|i'm|i've|i'd|i'll|me|myself)\b|\bi\b", re.I)
_DEFINITE_WORK = re.compile(
    rf"\b(?:the|this|that|these|those|your|which|today's|tomorrow's)\s+(?:[\w'-]+\s+){{0,2}}?(?:{_WORK_NOUNS})(?:s|es)?\b",
    re.I,
)
_ORG = re.compile(
    rf"\b(?:the|this|that|your|[\w-]+'s)\s+(?:[\w-]+\s+)?(?:{alternation(ORG_NOUNS)})\b|\bon[\s-]call\b|"
    rf"^(?:what|when|how|did|has|have|is)\s+(?:did\s+|has\s+|have\s+|is\s+)?(?:legal|finance|hr|sales|marketing|support|"
    r"engineering|management|leadership|ops)\s+(?:say|said|decide|decided|approve|approved|sign|signed|reply|replied|"
    r"want|think|agree|agreed)\b",
    re.I,
)
_STATE_ATTRIBUTE = re.compile(
    rf"\b(?:the|this|that|your|[\w-]+'s)\s+(?:[\w-]+\s+)?(?:{alternation(STATE_ATTRIBUTES)})\b", re.I
)
_ANY_WORK = re.compile(rf"\b(?:{_WORK_NOUNS})(?:s|es)?\b", re.I)
_WORK_STATE = re.compile(rf"\b(?:{alternation(STATE_WORDS)})\b", re.I)
_DEFINITIONAL = re.compile(
    r"^\s*(?:what\s+(?:is|are)\s+an?\s|what's\s+an?\s|what\s+(?:is|are)\s+the\s+(?:difference|purpose|meaning|point|"
    r"role)\b|what\s+does\b.*\bmean\b|define\b|explain\b|describe\b|why\s+(?:do|does)\s|how\s+(?:do|does)\s)",
    re.I,
)
_NOW_WORDS = re.compile(
    rf"\b(?:{alternation(TIME_ANCHORS)})\b|\b(?:on|by|until|before|after|next|last|this)\s+(?:{alternation(WEEKDAYS)})\b|"
    rf"\b(?:{alternation(WEEKDAYS)})'s\b|\b(?:in|by|until|since|for|the|this|next|last)\s+(?:{alternation(MONTHS)})\b|"
    rf"\b(?:{alternation(MONTHS)})\s+(?:invoice|report|numbers|figures|release|payroll|deadline)s?\b|"
    r"\bq[1-4]\b|\bh[12]\b|\bfy\s?\d{2,4}\b",
    re.I,
)
_STATUS = re.compile(
    r"\b(?:status of|progress on|progress of|any update|update on|updates on|how is .+ going|how are .+ going|"
    r"how's .+ going|where is the|where are the|when will|is it done|eta|where do things stand|where things stand|"
    r"what's the holdup|what is the holdup|what's happening with|what happened with|how far along|"
    r"how (?:is|are|was|were) .+ doing|how's .+ doing|how (?:is|are) .+ coming along|how did .+ go)\b",
    re.I,
)
_GENERIC_ETA = re.compile(r"\b(?:what does|what is|what's)\s+(?:an?\s+)?eta\b|\beta\s+(?:stand|mean)", re.I)
_BARE_WORK_SUBJECT = re.compile(
    rf"^(?:(?:why|how|when|where)\s+)?(?:is|isn't|does|doesn't|did|didn't|was|wasn't|has|hasn't|can|can't)\s+"
    rf"(?:{_WORK_NOUNS})\b(?!\s+(?:a|an)\b)|"
    rf"^(?:(?:how|why|when)\s+)?(?:do|are|can|should|will|don't|aren't|can't)\s+(?:[a-z-]+\s+)?"
    rf"(?:{_WORK_NOUNS})(?:s|es)\b",
    re.I,
)
"""A work noun without a determiner as the subject ("Why is staging slow?", "Does checkout work?"): a bare singular
count noun is the name of one system or thing of the asker's; a kind would be plural or take "a". And a work noun
as a bare-plural subject ("How do refunds work?", "How are expense reports approved?", "Do contractors get
laptops?"): asked of an assistant at work, it is the organisation's procedure or policy (an answer from general
knowledge could be wrong for it), so it loads -- the safe side for "How do databases work?" too."""
_IDENTIFIER = re.compile(rf"#\d+|\b[A-Z]{{2,}}-\d+\b|\b(?:{_WORK_NOUNS})\s+#?\d+(?:\.\d+)*\b", re.I)


def work_signals(question: str) -> list[str]:
    """The signs of someone's current work found in ``question`` (names of the rules that fired, in a fixed order;
    empty = none). One question at a time; the conversation is :func:`is_conceptual_question`'s business."""
    text = normalise_question(question)
    found = []
    stripped = _GENERIC_I.sub(" ", text)
    if _FIRST_PERSON.search(stripped):
        found.append("first_person")
    if _DEFINITE_WORK.search(text):
        found.append("definite_work_object")
    if _INSTANCE.search(text):
        found.append("particular_instance")
    if _ORG.search(text) or _PLACE.search(text):
        found.append("organisation")
    if _STATE_ATTRIBUTE.search(text):
        found.append("state_attribute")
    if _ANY_WORK.search(text) and _WORK_STATE.search(text) and not _DEFINITIONAL.search(text):
        found.append("work_state")
    if _BARE_WORK_SUBJECT.match(text):
        found.append("named_work_subject")
    if _ONGOING.search(text):
        found.append("ongoing")
    if _NOW_WORDS.search(text):
        found.append("time_now")
    status = _STATUS.search(text)
    if status and not (status.group(0).lower() == "eta" and _GENERIC_ETA.search(text)):
        found.append("status")
    if _IDENTIFIER.search(text):
        found.append("identifier")
    return found


MAX_QUESTION_CHARS = 2_000
"""Longer turns are never conceptual (they load), and the rules do not read them: a general-knowledge question is
a sentence or a few, while a turn of thousands of characters is a pasted document or log (about work, as far as
the rules can tell). Loading only costs tokens, and the rules' time grows with the text. A policy bound, not
measured on any data set: 2,000 characters is about 400 English words."""


def _decide(question: str, inherited: bool | None, previous: str | None = None) -> bool:
    """One turn: conceptual only when no work signal, no follow-up (else ``inherited``; ``None`` -> load) and a
    general-knowledge form (a turn over :data:`MAX_QUESTION_CHARS` loads). ``previous`` is the user turn it follows (``None``: the first turn); with it:

    - after a turn that loaded, an open definite ("how does *the retry* work?", :func:`open_definites`) is read as
      pointing into that turn's context, so the question is a follow-up and loads too;
    - a follow-up of a conceptual turn that brings in a referent the turn did not mention ("does *the plant* use
      it?", "is that how *prod* is set up?", :func:`new_references`) applies the concept to something particular:
      it does not inherit, it loads.
    """
    if len(question) > MAX_QUESTION_CHARS or not question.strip() or work_signals(question):
        return False
    followup = bool(followup_signals(question))
    if previous is not None:
        if inherited is False and open_definites(question):
            return False
        if followup and inherited and new_references(question, previous):
            return False
    if followup:
        return bool(inherited)
    return general_form(question) is not None


_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant"}


def content_text(content: Any) -> str:
    """The text of a message ``content``: a string as it is; of a list of content blocks, the strings and the string
    ``text`` of the blocks, joined by spaces (images, tool calls, a ``null`` or non-string text add nothing);
    anything else (``None``, a number, an object) -> ``""``, so no text is made up from a value's repr."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = (b if isinstance(b, str) else b.get("text") if isinstance(b, Mapping) else None for b in content)
        return " ".join(p for p in parts if isinstance(p, str))
    return ""


def as_turns(history: Sequence[Any] | None) -> list[Turn]:
    """``history`` as ``(role, text)`` pairs, role ``"user"``/``"assistant"``: plain strings are user turns;
    ``(role, text)`` tuples, ``{"role", "content"}`` dicts and LangChain messages are read by their role (system and
    tool messages, and anything else, are left out)."""
    out: list[Turn] = []
    for turn in history or ():
        if isinstance(turn, str):
            out.append(("user", turn))
        elif isinstance(turn, tuple) and len(turn) == 2 and isinstance(turn[1], str) and turn[0] in _ROLES:
            out.append((_ROLES[turn[0]], turn[1]))
        elif isinstance(turn, BaseMessage) and turn.type in _ROLES:
            out.append((_ROLES[turn.type], content_text(turn.content)))
        elif isinstance(turn, Mapping) and turn.get("role") in _ROLES:
            out.append((_ROLES[turn["role"]], content_text(turn.get("content", ""))))
    return out


def _user_turns(history: Sequence[Any] | None) -> list[str]:
    return [text for role, text in as_turns(history) if role == "user"][-HISTORY_TURNS:]


def is_conceptual_question(question: str, history: Sequence[Turn | str] | None = None) -> bool:
    """Default classifier: True when ``question`` is clearly general knowledge (module docstring).

    Args:
        question: the latest user message.
        history: the earlier turns, oldest first: ``(role, text)`` pairs (role ``"user"``/``"assistant"``),
            plain strings (user turns), ``{"role", "content"}`` dicts or LangChain messages (:func:`as_turns`). Only the last :data:`HISTORY_TURNS` user turns are used: each is decided in
            order, so a follow-up inherits the decision of the turn it follows (and a chain of follow-ups the
            decision of the turn that started it).

    Raises:
        TypeError: ``question`` is not a string.
    """
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, got {type(question).__name__}: {question!r}")
    inherited: bool | None = None
    previous: str | None = None
    for earlier in _user_turns(history):
        inherited = _decide(earlier, inherited, previous)
        previous = earlier
    return _decide(question, inherited, previous)


_SYSTEM = (
    "Classify the user's latest question. Answer with exactly one word: 'conceptual' if it asks for general "
    "knowledge that does not depend on the user's own or their team's current work, data, orders, tasks or "
    "projects; 'work' otherwise. A follow-up to an earlier turn ('And what is blocking it?') is about what that turn "
    "was about. When unsure, answer 'work'."
)

CHAT_HISTORY_TURNS = 6
"""Earlier turns (user and assistant) shown to a chat-model classifier, each cut to :data:`CHAT_TURN_CHARS`."""
CHAT_TURN_CHARS = 500

_model_failed = ThrottledWarning(get_logger("promptcache.memory"))

_CONFIG: RunnableConfig = {"tags": ["nostream", "promptcache:memory-classifier"]}
"""Tags of the classifier's model call: LangGraph's ``nostream`` keeps its tokens out of ``stream_mode="messages"``."""


class ChatModelClassifier:
    """A chat model as a conceptual-question classifier (one short call per question; sync and async).

    The model sees the last :data:`CHAT_HISTORY_TURNS` earlier turns (when there are any) and the latest question.

    Args:
        model: a LangChain ``BaseChatModel``. Its answer counts as conceptual when it starts with "conceptual".
        fallback: used when the model call fails (default :func:`is_conceptual_question`, given the same history);
            the failure is logged (throttled: one line a minute).
    """

    def __init__(self, model: BaseChatModel, fallback: ConceptualClassifier = is_conceptual_question) -> None:
        self.model = model
        self.fallback = fallback

    @staticmethod
    def _messages(question: str, history: Sequence[Turn | str] | None = None) -> list[Any]:
        turns = as_turns(history)[-CHAT_HISTORY_TURNS:]
        if not turns:
            return [SystemMessage(_SYSTEM), HumanMessage(question)]
        lines = "\n".join(f"{role}: {' '.join(text.split())[:CHAT_TURN_CHARS]}" for role, text in turns)
        return [
            SystemMessage(_SYSTEM),
            HumanMessage(f"Earlier turns (oldest first):\n{lines}\n\nLatest question: {question}"),
        ]

    @staticmethod
    def _parse(reply: Any) -> bool:
        return content_text(reply.content).strip().lower().startswith("conceptual")

    def _fallback(self, question: str, history: Sequence[Turn | str] | None) -> bool:
        return bool(
            self.fallback(question, history=history) if takes_history(self.fallback) else self.fallback(question)
        )

    def __call__(self, question: str, history: Sequence[Turn | str] | None = None) -> bool:
        try:
            return self._parse(self.model.invoke(self._messages(question, history), config=_CONFIG))
        except Exception as exc:  # noqa: BLE001 - a classifier failure must not break the turn
            _model_failed.warn("the classifier model failed; using the fallback rules", exc=exc)
            return self._fallback(question, history)

    async def acall(self, question: str, history: Sequence[Turn | str] | None = None) -> bool:
        """Async twin of ``__call__``."""
        try:
            return self._parse(await self.model.ainvoke(self._messages(question, history), config=_CONFIG))
        except Exception as exc:  # noqa: BLE001
            _model_failed.warn("the classifier model failed; using the fallback rules", exc=exc)
            return self._fallback(question, history)


def takes_history(classifier: Any) -> bool:
    """True when ``classifier`` accepts a ``history`` keyword (then it is given the earlier turns)."""
    try:
        params = inspect.signature(classifier).parameters
    except (TypeError, ValueError):
        return False
    return "history" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def make_classifier(classifier: Any = None) -> ConceptualClassifier:
    """Normalise a classifier argument: ``None`` -> the default rules, a chat model -> :class:`ChatModelClassifier`,
    a callable -> itself (``f(question)`` sees the latest question alone; ``f(question, history=...)`` also gets
    the earlier turns).

    Raises:
        TypeError: anything else.
    """
    if classifier is None:
        return is_conceptual_question
    if isinstance(classifier, BaseChatModel):
        return ChatModelClassifier(classifier)
    if callable(classifier):
        given: ConceptualClassifier = classifier
        return given
    raise TypeError(f"classifier must be a callable(str) -> bool or a chat model, got {classifier!r}")


def classify(classifier: ConceptualClassifier, question: str, history: Sequence[Turn | str] | None = None) -> bool:
    """Run ``classifier`` on ``question``, with ``history`` when it takes it (:func:`takes_history`)."""
    if takes_history(classifier):
        return bool(classifier(question, history=history))
    return bool(classifier(question))


async def aclassify(
    classifier: ConceptualClassifier, question: str, history: Sequence[Turn | str] | None = None
) -> bool:
    """Async :func:`classify`: awaits the classifier's ``acall`` when it has one."""
    acall = getattr(classifier, "acall", None)
    if acall is not None:
        if takes_history(acall):
            return bool(await acall(question, history=history))
        return bool(await acall(question))
    return classify(classifier, question, history)

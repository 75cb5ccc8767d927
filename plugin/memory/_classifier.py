"""Does this turn need the user's project state? The load decision of typed memory, from the conversation.

Project-state lookups are skipped for general-knowledge ("conceptual") questions ("is 97 prime?", "What is the
difference between supervised and reinforcement learning?"): no ETA or task progress is needed to answer them. A
wrong "conceptual" costs a wrong answer (project state the answer needed is not loaded); a wrong "not conceptual"
only costs tokens. The default (`is_conceptual_question`) decides each user turn, oldest first, with three
rules and a trained model:

1. a turn that names the user's code -- a file, path, function, class, identifier or service
   (`code_names`) -- is work, and so is one about the asker themself (`is_about_asker`: "I", "me", "my" outside
   a how-to opener such as "how do I ...": "which club introduced me to ...", "what is the firm I manage");
2. a short command with a pronoun object ("fix it", "ship that", "rerun them": `is_pronoun_command`) after
   an earlier work turn refers back to the last work turn: work, whatever came between;
3. a turn over `MAX_QUESTION_CHARS` (a pasted document or log) or an empty one is work, and so is an elliptical
   turn right after a work turn (`is_elliptical`: "why so slow", "since when?": a fragment without a verb of its
   own continues the topic before; after a general turn the next rules decide, because a
   wrong skip costs an answer and a wrong load only tokens);
4. a follow-up (`is_followup`: it opens with "and" / "what about" / "also", or refers back with a pronoun:
   "how did he die", "what causes it") inherits the decision of the turn it follows -- unless it turns to the
   asker's own ("and ours?", "what about my team?": a first-person word), which is work;
5. otherwise the naive Bayes model of `promptcache.memory._load_model` decides from the turn's words, at a
   threshold set by the stated cost ratio of the two errors (`MISS_COST`: a wrong skip counts as 20 wrong loads).

Rules 1, 2 and 4 are written from the conventions they name (how code is named; how English refers back), not
fitted to data; the model was trained on the labelled files in ``tests/data/`` and measured on other, held-out
files (bench/README.md, "## Memory load decision", ``python bench/memory_load_eval.py``).

`make_classifier` accepts this default, any callable (``f(question)``, or ``f(question, history=...)`` to
see the earlier turns), or a LangChain chat model (`ChatModelClassifier`: asked a one-word question with
the recent turns; sync and async).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from promptcache._log import ThrottledWarning, get_logger
from promptcache.memory._code_names import code_names
from promptcache.memory._load_model import load_model

__all__ = [
    "ChatModelClassifier",
    "ConceptualClassifier",
    "ELLIPSIS_WORDS",
    "HISTORY_TURNS",
    "MAX_QUESTION_CHARS",
    "Turn",
    "as_turns",
    "content_text",
    "decide_turns",
    "is_about_asker",
    "is_conceptual_question",
    "is_elliptical",
    "is_followup",
    "is_pronoun_command",
    "make_classifier",
    "takes_history",
]

ConceptualClassifier = Callable[..., bool]
"""``f(question)`` or ``f(question, history=[...])`` -> True when it is conceptual (no project state needed)."""

Turn = tuple[str, str]
"""One earlier turn of the conversation: ``(role, text)``, role ``"user"`` or ``"assistant"``."""

HISTORY_TURNS = 8
"""How many earlier user turns are decided to reach the latest one (older turns are not read; a policy bound, not
measured: conversations in the labelled sets refer back one or two turns)."""

MAX_QUESTION_CHARS = 2_000
"""Longer turns are never conceptual (they load), and the model does not read them: a general-knowledge question
is a sentence or a few, while a turn of thousands of characters is a pasted document or log. A policy bound, not
measured on any data set: 2,000 characters is about 400 English words."""

_QUESTION_WORDS = frozenset(
    "what who whom whose when where why how which is are was were am do does did can could would should will shall "
    "may might must has have had and or but so if any anything".split()
)
_OBJECT_PRONOUNS = re.compile(r"\b(?:it|that|this|them|those|these|one)\b", re.I)
_WORD = re.compile(r"[A-Za-z']+")
PRONOUN_COMMAND_WORDS = 6
"""A pronoun command has at most this many words ("ok, push that to main" has five): longer imperatives name
what they act on."""


ELLIPSIS_WORDS = 3
"""An elliptical turn has at most this many words ("why so slow", "for how long?", "which one?"): a policy bound from
English ellipsis (a question word and one or two words it modifies), not fitted to data."""


_AUXILIARIES = frozenset(
    "is are was were am be been being do does did can could would should will shall may might must has have had "
    "isn't aren't wasn't weren't don't doesn't didn't can't won't hasn't haven't".split()
)


def is_elliptical(question: str) -> bool:
    """A turn of at most `ELLIPSIS_WORDS` words without an auxiliary or copula ("why so slow", "since when?",
    "and April?"): a fragment, not a sentence of its own ("is 97 prime?" is one)."""
    words = _WORD.findall(question.lower())
    return 0 < len(words) <= ELLIPSIS_WORDS and not any(w in _AUXILIARIES for w in words)


def is_pronoun_command(question: str) -> bool:
    """An imperative of at most `PRONOUN_COMMAND_WORDS` words whose object is a pronoun ("fix it", "ok,
    ship that", "rerun them"): it does not start with a question word or auxiliary, and it has no question mark."""
    words = _WORD.findall(question.lower())
    if not words or len(words) > PRONOUN_COMMAND_WORDS or question.rstrip().endswith("?"):
        return False
    first = next((w for w in words if w not in {"ok", "okay", "please", "now", "then", "so", "cool", "great"}), "")
    return bool(first) and first not in _QUESTION_WORDS and bool(_OBJECT_PRONOUNS.search(question))


_FOLLOWUP = re.compile(
    r"^\W*(?:and|also|so|but|then|what about|how about)\b|"
    r"\b(?:it|its|it's|they|them|their|theirs|he|him|his|she|her|that one|this one|those|these|that|this|there|then)\b",
    re.I,
)


_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|we|us|our|ours|i'm|we're|i've|we've)\b", re.I)


_SINGULAR_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|i'm|i've|i'd|i'll)\b", re.I)
_HOW_TO = re.compile(r"^\W*(?:how\s+(?:do|can|could|should|would|to)\s+(?:i\b)?|how\s+to\b)", re.I)


def is_about_asker(question: str) -> bool:
    """Whether ``question`` is about the asker themself: a first-person singular word ("I", "me", "my", "mine",
    "myself", "I'm", ...), unless the question opens with a how-to ("how do I ...", "how can I ...", "how to
    ...": the asker as anyone doing the task) and has no other first-person word after that opener."""
    opener = _HOW_TO.match(question)
    rest = question[opener.end() :] if opener else question
    return bool(_SINGULAR_FIRST_PERSON.search(rest.replace("\u2019", "'")))


def is_followup(question: str) -> bool:
    """Whether ``question`` leans on an earlier turn: an elliptical opener ("and ...", "what about ...") or an
    anaphoric pronoun or deictic ("it", "they", "he", "that", "those", "there", "then")."""
    return bool(_FOLLOWUP.search(question))


def _decide(question: str, previous: str, any_work: bool) -> bool:
    """One turn (module docstring): True = conceptual. ``previous``: the decision of the turn before (``"work"``,
    ``"general"`` or ``"none"``); ``any_work``: an earlier turn was work."""
    if len(question) > MAX_QUESTION_CHARS or not question.strip() or code_names(question) or is_about_asker(question):
        return False
    if any_work and is_pronoun_command(question):
        return False
    if previous == "work" and is_elliptical(question):
        return False
    if previous != "none" and is_followup(question):
        return previous == "general" and not _FIRST_PERSON.search(question)
    return load_model().is_general(question)


_ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant"}


def content_text(content: object) -> str:
    """The text of a message ``content``: a string as it is; of a list of content blocks, the strings and the string
    ``text`` of the blocks, joined by spaces (images, tool calls, a ``null`` or non-string text add nothing);
    anything else (``None``, a number, an object) -> ``""``, so no text is made up from a value's repr."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = (b if isinstance(b, str) else b.get("text") if isinstance(b, Mapping) else None for b in content)
        return " ".join(p for p in parts if isinstance(p, str))
    return ""


def as_turns(history: Sequence[object] | None) -> list[Turn]:
    """``history`` as ``(role, text)`` pairs, role ``"user"``/``"assistant"``: plain strings are user turns;
    ``(role, text)`` tuples, ``{"role", "content"}`` dicts and LangChain messages are read by their role (system and
    tool messages, and anything else, are left out)."""
    out: list[Turn] = []
    for turn in history or ():
        if isinstance(turn, str):
            out.append(("user", turn))
        elif (
            isinstance(turn, tuple)
            and len(turn) == 2
            and isinstance(turn[0], str)
            and isinstance(turn[1], str)
            and turn[0] in _ROLES
        ):
            out.append((_ROLES[turn[0]], turn[1]))
        elif isinstance(turn, BaseMessage) and turn.type in _ROLES:
            out.append((_ROLES[turn.type], content_text(turn.content)))
        elif isinstance(turn, Mapping) and turn.get("role") in _ROLES:
            out.append((_ROLES[turn["role"]], content_text(turn.get("content", ""))))
    return out


def _user_turns(history: Sequence[object] | None) -> list[str]:
    return [text for role, text in as_turns(history) if role == "user"][-HISTORY_TURNS:]


def decide_turns(questions: Sequence[str]) -> list[bool]:
    """The decision of every user turn of a conversation, oldest first (True = conceptual), as
    `is_conceptual_question` makes them."""
    out: list[bool] = []
    previous, any_work = "none", False
    for text in questions:
        conceptual = _decide(text, previous, any_work)
        out.append(conceptual)
        previous = "general" if conceptual else "work"
        any_work = any_work or not conceptual
    return out


def is_conceptual_question(question: str, history: Sequence[Turn | str] | None = None) -> bool:
    """Default classifier: True when ``question`` is general knowledge (module docstring).

    Args:
        question: the latest user message.
        history: the earlier turns, oldest first: ``(role, text)`` pairs (role ``"user"``/``"assistant"``),
            plain strings (user turns), ``{"role", "content"}`` dicts or LangChain messages (`as_turns`).
            The last `HISTORY_TURNS` user turns are decided in order before ``question``.

    Raises:
        TypeError: ``question`` is not a string.
    """
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, got {type(question).__name__}: {question!r}")
    return decide_turns([*_user_turns(history), question])[-1]


_SYSTEM = (
    "Classify the user's latest question. Answer with exactly one word: 'conceptual' if it asks for general "
    "knowledge that does not depend on the user's own or their team's current work, data, orders, tasks or "
    "projects; 'work' otherwise. A follow-up to an earlier turn ('And what is blocking it?') is about what that turn "
    "was about. When unsure, answer 'work'."
)

CHAT_HISTORY_TURNS = 6
"""Earlier turns (user and assistant) shown to a chat-model classifier, each cut to `CHAT_TURN_CHARS`."""
CHAT_TURN_CHARS = 500

_model_failed = ThrottledWarning(get_logger("promptcache.memory"))

_CONFIG: RunnableConfig = {"tags": ["nostream", "promptcache:memory-classifier"]}
"""Tags of the classifier's model call: LangGraph's ``nostream`` keeps its tokens out of ``stream_mode="messages"``."""


class ChatModelClassifier:
    """A chat model as a conceptual-question classifier (one short call per question; sync and async).

    The model sees the last `CHAT_HISTORY_TURNS` earlier turns (when there are any) and the latest question.

    Args:
        model: a LangChain ``BaseChatModel``. Its answer counts as conceptual when it starts with "conceptual".
        fallback: used when the model call fails (default `is_conceptual_question`, given the same history);
            the failure is logged (throttled: one line a minute).
    """

    def __init__(self, model: BaseChatModel, fallback: ConceptualClassifier = is_conceptual_question) -> None:
        self.model = model
        self.fallback = fallback

    @staticmethod
    def _messages(question: str, history: Sequence[Turn | str] | None = None) -> list[BaseMessage]:
        turns = as_turns(history)[-CHAT_HISTORY_TURNS:]
        if not turns:
            return [SystemMessage(_SYSTEM), HumanMessage(question)]
        lines = "\n".join(f"{role}: {' '.join(text.split())[:CHAT_TURN_CHARS]}" for role, text in turns)
        return [
            SystemMessage(_SYSTEM),
            HumanMessage(f"Earlier turns (oldest first):\n{lines}\n\nLatest question: {question}"),
        ]

    @staticmethod
    def _parse(reply: BaseMessage) -> bool:
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


def takes_history(classifier: Callable[..., object]) -> bool:
    """True when ``classifier`` accepts a ``history`` keyword (then it is given the earlier turns)."""
    try:
        params = inspect.signature(classifier).parameters
    except (TypeError, ValueError):
        return False
    return "history" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def make_classifier(classifier: ConceptualClassifier | BaseChatModel | None = None) -> ConceptualClassifier:
    """Normalise a classifier argument: ``None`` -> the default rules, a chat model -> `ChatModelClassifier`,
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
    """Run ``classifier`` on ``question``, with ``history`` when it takes it (`takes_history`)."""
    if takes_history(classifier):
        return bool(classifier(question, history=history))
    return bool(classifier(question))


async def aclassify(
    classifier: ConceptualClassifier, question: str, history: Sequence[Turn | str] | None = None
) -> bool:
    """Async `classify`: awaits the classifier's ``acall`` when it has one."""
    acall = getattr(classifier, "acall", None)
    if acall is not None:
        if takes_history(acall):
            return bool(await acall(question, history=history))
        return bool(await acall(question))
    return classify(classifier, question, history)

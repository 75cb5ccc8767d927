"""Is the latest question *conceptual* (general knowledge) or about the user's current work?

Typed memory (docs/architecture.md) skips project-state lookups for purely conceptual questions ("What is the difference
between supervised and reinforcement learning?"): no ETA or task progress is needed to answer them. A wrong
"conceptual" costs recall (project state the answer needed is not loaded); a wrong "not conceptual" only costs
tokens. So the default leans to "not conceptual" whenever it sees any sign of the user's own work.

:func:`is_conceptual_question` is the default: rules, no model. The signs of current work it looks for:

- first person outside a generic how-to: "my", "our", "we", "us", "mine", "I" (but not "how do I", "should I",
  "can I", "what if I", "tell/show/give/help/teach me");
- a definite or possessive reference to a work object: "the/this/that/your/which <order|ticket|build|sprint|
  runbook|dashboard|...>" (one modifier word may sit between, e.g. "the on-call runbook");
- a work object together with a word for its state ("How many sprint stories are done?", "... still pending",
  "... blocked"), unless the question is definitional or generic ("What is a pending transaction?", "Explain ...",
  "Why do builds fail when ...", "How does ...");
- time words that point at now: today, tomorrow, yesterday, tonight, currently, right now, so far, still, yet,
  latest, this week/morning/...;
- status phrasing: "status of", "progress on", "any update", "how is ... going", "ETA" used bare;
- identifiers: ``#42``, ``ABC-123``, "order 42", "ticket 7".

A question with none of these is conceptual. :func:`make_classifier` accepts this default, any
``Callable[[str], bool]``, or a LangChain chat model (asked a yes/no question; sync and async).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage

from promptcache._log import ThrottledWarning, get_logger

__all__ = ["ChatModelClassifier", "ConceptualClassifier", "is_conceptual_question", "make_classifier"]

ConceptualClassifier = Callable[[str], bool]
"""``question -> True`` when it is conceptual (no project state needed)."""

_WORK_NOUNS = (
    r"order|orders|ticket|tickets|build|builds|deploy|deployment|release|sprint|pr|pull request|branch|migration|"
    r"shipment|delivery|package|parcel|invoice|payment|refund|booking|reservation|flight|meeting|deadline|eta|"
    r"task|tasks|project|report|draft|proposal|budget|test suite|tests|pipeline|server|cluster|incident|outage|"
    r"backlog|milestone|roadmap|demo|review|appointment|prescription|claim|case|account|subscription|contract|"
    r"quote|estimate|job|run|experiment|model training|training run|dataset|bug|issue|feature|ticket queue|rollout|"
    r"story|stories|epic|runbook|playbook|dashboard|board|wiki|channel|repo|repository|spec|doc|docs|document|"
    r"status page"
)
_GENERIC_I = re.compile(
    r"\b(?:how|when|why|where|what)\s+(?:do|can|should|would|could|might)\s+i\b|"
    r"\b(?:should|can|could|would|may|might)\s+i\b|\bwhat if i\b|\bif i\b|"
    r"\b(?:tell|show|give|help|teach)\s+me\b",
    re.I,
)
_FIRST_PERSON = re.compile(r"\b(?:my|our|ours|mine|we|we're|we've|we'd|us|i'm|i've|i'd|i'll|me|myself)\b|\bi\b", re.I)
_DEFINITE_WORK = re.compile(
    rf"\b(?:the|this|that|these|those|your|which|today's|tomorrow's)\s+(?:[\w-]+\s+)?(?:{_WORK_NOUNS})(?:s|es)?\b", re.I
)
_ANY_WORK = re.compile(rf"\b(?:{_WORK_NOUNS})(?:s|es)?\b", re.I)
_WORK_STATE = re.compile(
    r"\b(?:done|left|remaining|pending|open|closed|finished|blocked|blocking|failing|failed|overdue|outstanding|"
    r"waiting|stuck|merged|shipped|resolved|fixed|assigned|scheduled|confirmed|approved|delayed|due)\b",
    re.I,
)
_DEFINITIONAL = re.compile(
    r"^\s*(?:what\s+(?:is|are)\s+an?\s|what's\s+an?\s|what\s+(?:is|are)\s+the\s+(?:difference|purpose|meaning|point|"
    r"role)\b|what\s+does\b.*\bmean\b|define\b|explain\b|describe\b|why\s+(?:do|does)\s|how\s+(?:do|does)\s)",
    re.I,
)
_NOW_WORDS = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|currently|right now|so far|at the moment|as of now|anymore|latest|"
    r"still|yet|this (?:week|morning|afternoon|evening|month|quarter|sprint)|next (?:week|monday|tuesday|"
    r"wednesday|thursday|friday)|last (?:night|week))\b",
    re.I,
)
_STATUS = re.compile(
    r"\b(?:status of|progress on|progress of|any update|update on|updates on|how is .+ going|"
    r"how's .+ going|where is the|where are the|when will|is it done|eta)\b",
    re.I,
)
_GENERIC_ETA = re.compile(r"\b(?:what does|what is|what's)\s+(?:an?\s+)?eta\b|\beta\s+(?:stand|mean)", re.I)
_IDENTIFIER = re.compile(rf"#\d+|\b[A-Z]{{2,}}-\d+\b|\b(?:{_WORK_NOUNS})\s+#?\d+\b", re.I)


def work_signals(question: str) -> list[str]:
    """The signs of current work found in ``question`` (names of the rules that fired; empty = conceptual)."""
    text = question.strip()
    found = []
    stripped = _GENERIC_I.sub(" ", text)
    if _FIRST_PERSON.search(stripped):
        found.append("first_person")
    if _DEFINITE_WORK.search(text):
        found.append("definite_work_object")
    if _ANY_WORK.search(text) and _WORK_STATE.search(text) and not _DEFINITIONAL.search(text):
        found.append("work_state")
    if _NOW_WORDS.search(text):
        found.append("time_now")
    status = _STATUS.search(text)
    if status and not (status.group(0).lower() == "eta" and _GENERIC_ETA.search(text)):
        found.append("status")
    if _IDENTIFIER.search(text):
        found.append("identifier")
    return found


def is_conceptual_question(question: str) -> bool:
    """Default classifier: True when ``question`` shows no sign of the user's current work (module docstring).

    Raises:
        TypeError: ``question`` is not a string.
    """
    if not isinstance(question, str):
        raise TypeError(f"question must be a string, got {type(question).__name__}: {question!r}")
    if not question.strip():
        return False
    return not work_signals(question)


_SYSTEM = (
    "Classify the user's question. Answer with exactly one word: 'conceptual' if it asks for general knowledge "
    "that does not depend on the user's own current work, data, orders, tasks or projects; 'work' otherwise."
)


_model_failed = ThrottledWarning(get_logger("promptcache.memory"))

_CONFIG = {"tags": ["nostream", "promptcache:memory-classifier"]}
"""Tags of the classifier's model call: LangGraph's ``nostream`` keeps its tokens out of ``stream_mode="messages"``."""


class ChatModelClassifier:
    """A chat model as a conceptual-question classifier (one short call per question; sync and async).

    Args:
        model: a LangChain ``BaseChatModel``. Its answer counts as conceptual when it starts with "conceptual".
        fallback: used when the model call fails (default :func:`is_conceptual_question`); the failure is logged
            (throttled: one line a minute).
    """

    def __init__(self, model: BaseChatModel, fallback: ConceptualClassifier = is_conceptual_question) -> None:
        self.model = model
        self.fallback = fallback

    @staticmethod
    def _messages(question: str) -> list[Any]:
        return [SystemMessage(_SYSTEM), HumanMessage(question)]

    @staticmethod
    def _parse(reply: Any) -> bool:
        text = (
            reply.content
            if isinstance(reply.content, str)
            else " ".join(b.get("text", "") for b in reply.content if isinstance(b, dict))
        )
        return text.strip().lower().startswith("conceptual")

    def __call__(self, question: str) -> bool:
        try:
            return self._parse(self.model.invoke(self._messages(question), config=_CONFIG))
        except Exception as exc:  # noqa: BLE001 - a classifier failure must not break the turn
            _model_failed.warn("the classifier model failed; using the fallback rules", exc=exc)
            return self.fallback(question)

    async def acall(self, question: str) -> bool:
        """Async twin of ``__call__``."""
        try:
            return self._parse(await self.model.ainvoke(self._messages(question), config=_CONFIG))
        except Exception as exc:  # noqa: BLE001
            _model_failed.warn("the classifier model failed; using the fallback rules", exc=exc)
            return self.fallback(question)


def make_classifier(classifier: Any = None) -> ConceptualClassifier:
    """Normalise a classifier argument: ``None`` -> the default rules, a chat model -> :class:`ChatModelClassifier`,
    a callable -> itself.

    Raises:
        TypeError: anything else.
    """
    if classifier is None:
        return is_conceptual_question
    if isinstance(classifier, BaseChatModel):
        return ChatModelClassifier(classifier)
    if callable(classifier):
        return classifier
    raise TypeError(f"classifier must be a callable(str) -> bool or a chat model, got {classifier!r}")


async def aclassify(classifier: ConceptualClassifier, question: str) -> bool:
    """Run ``classifier`` on ``question``, awaiting its ``acall`` when it has one."""
    acall = getattr(classifier, "acall", None)
    if acall is not None:
        return bool(await acall(question))
    return bool(classifier(question))

"""Judges of a similar match: whether an earlier intention's result may answer a new intention.

Every similar match passes a `Verifier` between "similar" and "served":

- `LexicalVerifier` (the default, model-free): the two intentions must have the same meaning normal form
  (`promptcache.intention._meaning`: every difference between them an equivalence — fillers, contractions,
  other spellings of one word, inflection, free adverb order). Its verdict is a digest comparison, so memories are
  indexed by it and a lookup never scores every memory.
- `ChatModelVerifier`: for more hits at the same precision. The lexical verdict first; when it says no, a
  LangChain chat model is asked whether the earlier result answers the new intention (a few of the most similar
  memories). Verdicts are cached per (new intention, earlier intention, result); any failure — an exception, a
  reply that is not a clear yes or no — is "no".
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from cachetools import LRUCache

from promptcache._log import ThrottledWarning, get_logger
from promptcache.intention._meaning import compare, explain, signature
from promptcache.intention._normalize import normalize_intention

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import BaseMessage

__all__ = ["ChatModelVerifier", "LexicalVerifier", "Verifier", "as_verifier"]

_log = get_logger("promptcache.intention._judges")


class Verifier(ABC):
    """Decides whether a stored intention's result answers a new intention.

    Attributes:
        name: shown with a match (``IntentionMatch.verified_by``).
        asks_model: True when `verify` may consult more than the two texts (then candidates beyond the
            lexically equivalent ones are offered, each with its result).
    """

    name: str = "verifier"
    asks_model: bool = False

    def verify(self, query: str, stored: str, result: str | None = None) -> bool:
        """Whether the result of ``stored`` (its text ``result``, when the verifier needs it) answers ``query``."""
        return compare(query, stored) is None

    async def averify(self, query: str, stored: str, result: str | None = None) -> bool:
        """Async `verify` (default: the sync one)."""
        return self.verify(query, stored, result)

    @staticmethod
    def equivalent(query: str, stored: str) -> bool:
        """The lexical verdict (`promptcache.intention._meaning.compare` finds no difference)."""
        return compare(query, stored) is None

    @staticmethod
    def signature(text: str) -> str:
        """The index key of ``text``: equal for lexically equivalent intentions (`meaning.signature`)."""
        return str(signature(text))

    def describe(self, query: str, stored: str) -> str:
        """How ``stored`` differs from ``query``, for ``retrieve_memory`` (one short phrase)."""
        if self.equivalent(query, stored):
            return "same meaning; wording: " + str(explain(query, stored))
        reason = compare(query, stored) or "wording"
        return f"judged to answer it by {self.name} (lexically: {reason})"

    @abstractmethod
    def __repr__(self) -> str: ...


class LexicalVerifier(Verifier):
    """The model-free verifier: equivalent normal forms only (see `promptcache.intention._meaning`)."""

    name = "lexical"

    def __repr__(self) -> str:
        return "LexicalVerifier()"


_SYSTEM = (
    "You decide whether a stored tool result can be reused. Answer with one word: YES if the earlier result "
    "answers the new request exactly as asked (same people, places, direction, dates and times, amounts and "
    "units, action and polarity), otherwise NO."
)


class ChatModelVerifier(Verifier):
    """Asks a LangChain chat model when the lexical verdict says no.

    The prompt gives the earlier intention, its result (cut to ``max_result_chars``) and the new intention; a reply
    starting with "yes" (any case, after whitespace/punctuation) is a yes, one starting with "no" a no, anything
    else a failure. Failures (any exception, an unclear reply) are "no" and not cached (a later lookup asks
    again), logged at most once a minute.

    Args:
        model: a ``langchain_core`` chat model (anything with ``invoke``/``ainvoke`` taking a message list).
        max_checks: at most this many non-equivalent candidates are put to the model per lookup (an int >= 1,
            default 3: the most similar ones above the threshold).
        cache_size: verdicts kept (an int >= 0, default 4,096), keyed by (new intention, earlier intention, result).
        max_result_chars: characters of the result shown to the model (an int >= 1, default 2,000).
        name: shown in matches (default ``"chat-model"``).

    Raises:
        TypeError: ``model`` has no ``invoke``. ValueError: a bad count (named).
    """

    asks_model = True

    def __init__(
        self,
        model: BaseChatModel,
        *,
        max_checks: int = 3,
        cache_size: int = 4096,
        max_result_chars: int = 2000,
        name: str = "chat-model",
    ) -> None:
        if not callable(getattr(model, "invoke", None)):
            raise TypeError(f"model must be a LangChain chat model, got {type(model).__name__}")
        for what, value, low in (("max_checks", max_checks, 1), ("cache_size", cache_size, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{what} must be an int >= {low}, got {value!r}")
        if isinstance(max_result_chars, bool) or not isinstance(max_result_chars, int) or max_result_chars < 1:
            raise ValueError(f"max_result_chars must be an int >= 1, got {max_result_chars!r}")
        self.model = model
        self.max_checks = max_checks
        self.max_result_chars = max_result_chars
        self.name = name
        self._verdicts: LRUCache[tuple[str, str, str], bool] | None = (
            LRUCache(maxsize=cache_size) if cache_size else None
        )
        self._lock = threading.Lock()
        self._warning = ThrottledWarning(_log)
        self._usage = [0, 0, 0]

    def usage(self) -> tuple[int, int, int]:
        """``(model calls, input tokens, output tokens)`` so far (tokens from the replies' ``usage_metadata``;
        0 when a reply carries none). Cached verdicts cost nothing and are not counted."""
        with self._lock:
            calls, tin, tout = self._usage
        return calls, tin, tout

    def _count(self, reply: object) -> None:
        meta = getattr(reply, "usage_metadata", None) or {}
        with self._lock:
            self._usage[0] += 1
            self._usage[1] += int(meta.get("input_tokens", 0) or 0)
            self._usage[2] += int(meta.get("output_tokens", 0) or 0)

    def _key(self, query: str, stored: str, result: str | None) -> tuple[str, str, str]:
        return normalize_intention(query), normalize_intention(stored), result or ""

    def _cached(self, key: tuple[str, str, str]) -> bool | None:
        if self._verdicts is None:
            return None
        with self._lock:
            return self._verdicts.get(key)

    def _remember(self, key: tuple[str, str, str], verdict: bool) -> None:
        if self._verdicts is not None:
            with self._lock:
                self._verdicts[key] = verdict

    def messages(self, query: str, stored: str, result: str | None) -> list[BaseMessage]:
        """The messages sent to the model (a system message and one human message)."""
        from langchain_core.messages import HumanMessage, SystemMessage

        shown = (result or "")[: self.max_result_chars]
        return [
            SystemMessage(content=_SYSTEM),
            HumanMessage(
                content=f"Earlier request: {stored}\nIts result: {shown}\nNew request: {query}\n"
                "Does the earlier result answer the new request? Answer YES or NO."
            ),
        ]

    def _parse(self, reply: object) -> bool:
        text = getattr(reply, "content", reply)
        if isinstance(text, list):  # content blocks
            text = " ".join(b.get("text", "") if isinstance(b, dict) else str(b) for b in text)
        word = str(text).strip().lstrip("*\"'`([ ").casefold()
        if word.startswith("yes"):
            return True
        if word.startswith("no"):
            return False
        raise ValueError(f"unclear verdict from the model: {str(text)[:80]!r}")

    def verify(self, query: str, stored: str, result: str | None = None) -> bool:
        if self.equivalent(query, stored):
            return True
        key = self._key(query, stored, result)
        cached = self._cached(key)
        if cached is not None:
            return cached
        try:
            reply = self.model.invoke(self.messages(query, stored, result))
            self._count(reply)
            verdict = self._parse(reply)
        except Exception as exc:  # noqa: BLE001 - any failure is "no match"
            self._warning.warn("promptcache: intention verifier model failed; no match", exc=exc)
            return False
        self._remember(key, verdict)
        return verdict

    async def averify(self, query: str, stored: str, result: str | None = None) -> bool:
        if self.equivalent(query, stored):
            return True
        key = self._key(query, stored, result)
        cached = self._cached(key)
        if cached is not None:
            return cached
        try:
            reply = await self.model.ainvoke(self.messages(query, stored, result))
            self._count(reply)
            verdict = self._parse(reply)
        except Exception as exc:  # noqa: BLE001
            self._warning.warn("promptcache: intention verifier model failed; no match", exc=exc)
            return False
        self._remember(key, verdict)
        return verdict

    def __repr__(self) -> str:
        return f"ChatModelVerifier({type(self.model).__name__}, max_checks={self.max_checks})"


def as_verifier(value: object) -> Verifier:
    """``None`` -> `LexicalVerifier`; a `Verifier` as is.

    Raises:
        TypeError: anything else (the message names the type; wrap a chat model in `ChatModelVerifier`).
    """
    if value is None:
        return LexicalVerifier()
    if isinstance(value, Verifier):
        return value
    raise TypeError(
        f"verifier must be a Verifier or None, got {type(value).__name__} (wrap a chat model in ChatModelVerifier)"
    )

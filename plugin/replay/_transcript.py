"""The neutral transcript model every reader produces: conversations of messages of content blocks.

A reader (``promptcache.replay._readers``) turns OpenAI chat messages, Anthropic messages or LangChain
``messages_to_dict`` output into these objects; the simulator, the strategies and the repeat counters only ever see
this form, so a new input format is one more reader and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from promptcache._errors import PromptCacheError

__all__ = ["Block", "Conversation", "Message", "TranscriptError", "TranscriptWarning", "Usage", "BLOCK_KINDS", "ROLES"]

#: Content block kinds: plain text, a model's tool call, a tool's result, an image, model reasoning.
BLOCK_KINDS = frozenset({"text", "tool_use", "tool_result", "image", "reasoning"})
#: Message roles after normalisation (OpenAI ``developer``/``function`` and LangChain ``human``/``ai`` map here).
ROLES = frozenset({"system", "user", "assistant", "tool"})


class TranscriptError(PromptCacheError, ValueError):
    """A recorded conversation that cannot be read. ``str()`` is one line: ``FILE:LINE: what is wrong`` (``FILE: what
    is wrong`` when the problem is the file itself: missing, a directory, unreadable).

    Attributes:
        path: the file (as given on the command line).
        line: 1-based line number of the offending JSON value (or JSONL line); 0 when unknown.
        reason: what is wrong, naming the bad value.
    """

    def __init__(self, path: str, line: int, reason: str) -> None:
        self.path, self.line, self.reason = str(path), int(line), " ".join(str(reason).split())
        where = f"{self.path}:{self.line}" if self.line > 0 else self.path  # line 0: about the file as a whole
        super().__init__(f"{where}: {self.reason}")


class TranscriptWarning(UserWarning):
    """Something in a recorded conversation that the reader skipped (e.g. a record type it has never seen); the
    message is one line, ``FILE:LINE: what was skipped``. Readers warn once per file and kind, not per record."""


@dataclass(frozen=True, slots=True)
class Block:
    """One content block.

    Attributes:
        kind: one of ``BLOCK_KINDS``.
        text: the text; for ``tool_use`` the arguments as canonical JSON; for ``tool_result`` the result text;
            for ``image`` a short description (media type / URL) — images are counted at a fixed token cost.
        name: the tool name (``tool_use``; ``tool_result`` when the format records it).
        id: the tool call id (``tool_use``) or the id it answers (``tool_result``).
        is_error: a ``tool_result`` reported as an error.
    """

    kind: str
    text: str = ""
    name: str = ""
    id: str = ""
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Usage:
    """The token usage a log recorded for one model call (the request that produced an assistant message).

    All counts are tokens. ``input_tokens`` is the uncached input only (Anthropic ``input_tokens``, Converse
    ``inputTokens``; OpenAI ``prompt_tokens`` minus ``cached_tokens``), so the prompt's real size is
    ``input_tokens + cache_read_tokens + cache_write_tokens``.

    Attributes:
        input_tokens: uncached input tokens.
        cache_read_tokens: tokens read from the prompt cache (``cache_read_input_tokens``/``cacheReadInputTokens``/
            ``cached_tokens``).
        cache_write_tokens: tokens written to the cache, every TTL (``cache_creation_input_tokens``/
            ``cacheWriteInputTokens``).
        cache_write_1h_tokens: the part of ``cache_write_tokens`` written with the 1-hour TTL (Anthropic's
            ``cache_creation.ephemeral_1h_input_tokens``); the rest used the 5-minute TTL.
        output_tokens: generated tokens.
    """

    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    output_tokens: int = 0

    @property
    def prompt_tokens(self) -> int:
        """The request's whole prompt as billed: uncached input + cache read + cache write tokens."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens


@dataclass(slots=True)
class Message:
    """One message.

    Attributes:
        role: one of ``ROLES``.
        blocks: its content blocks.
        timestamp: epoch seconds, when recorded.
        usage: for an assistant message, the logged usage of the model call that produced it (``None`` when the
            log has none).
        model: for an assistant message, the model id the log names for that call (``None`` when not recorded).
    """

    role: str
    blocks: tuple[Block, ...]
    timestamp: float | None = None
    usage: Usage | None = None
    model: str | None = None

    def tool_calls(self) -> list[Block]:
        """The ``tool_use`` blocks of this message, in order."""
        return [b for b in self.blocks if b.kind == "tool_use"]


@dataclass(slots=True)
class Conversation:
    """One recorded agent conversation.

    Attributes:
        id: unique within a replay (``file#index`` unless the record names it).
        family: what an intention cache is scoped by — the record's user id / task id when it has one, else ``id``.
        system: the system prompt blocks (may be empty).
        messages: the non-system messages in order.
        tools: tool schemas when the record carries them (JSON objects, counted as one block each).
        source: ``"FILE:LINE"`` where the conversation starts.
        meta: anything else worth keeping from the record (format name, trial, ...).
        replies: indices of the messages that are the replies of this conversation's own model calls, when a
            reader knows them (a log of real API calls: a conversation that repeats another one's history, such as
            a rewound branch, must not count that history's replies again). ``None``: every assistant message
            after the first message is a reply.
    """

    id: str
    family: str
    system: tuple[Block, ...]
    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)
    source: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    replies: list[int] | None = None

    def request_ends(self) -> list[int]:
        """Indices ``i`` such that ``messages[:i]`` is one model request: ``replies`` when set (those with history),
        else every assistant turn with history."""
        if self.replies is not None:
            return [i for i in self.replies if i > 0]
        return [i for i, m in enumerate(self.messages) if m.role == "assistant" and i > 0]

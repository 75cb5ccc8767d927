"""The one walk over a logged message's content that every call-log reader uses.

A message's ``content`` is a list of content blocks (some formats also take a plain string, or plain strings as
items). The walk is the same in every format: check the shape, find each block's kind, turn it into our
``Block`` (text, image, tool_use, tool_result, reasoning), or record it (a cache point), or refuse it with the
path of the offending value. What differs between formats is stated in a ``Dialect``:

- how a block names its kind: a ``"type"`` field (Anthropic Messages, OpenAI Chat Completions, LangChain content
  blocks: ``promptcache.replay._messages``) or its only key (Bedrock Converse ``ContentBlock``:
  ``promptcache.replay._bedrock_bodies``);
- one handler per kind, ``(block body, path, blocks so far, context) -> Block | None`` (``None``: the block adds
  no ``Block``, e.g. a ``cachePoint``; raising `Unsupported`: the kind is refused as unknown, e.g. a ``toolUse``
  whose body is not an object);
- whether plain strings are text, and the wording of the two shape errors.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from promptcache._errors import PromptCacheError

from ._bad_record import BadRecord, _short
from ._jsonpos import JSONPath
from ._transcript import Block

__all__ = ["Dialect", "Handler", "Unsupported", "walk_blocks"]

_B = TypeVar("_B")

#: A block kind's reader: ``(body, path of the block, number of blocks so far, the caller's context)``.
Handler = Callable[[_B, JSONPath, int, object], "Block | None"]


class Unsupported(PromptCacheError):
    """Raised by a `Handler` for a block it does not read; the walk reports the block's kind as unsupported
    (a ``BadRecord`` naming the block: this error never leaves the walk)."""


@dataclass(frozen=True, slots=True)
class Dialect(Generic[_B]):
    """What one format's content blocks look like (module docstring).

    Attributes:
        kind_of: ``(block, path) -> (kind, body)`` (``body``: what the handlers read); raises ``BadRecord`` for a block of the wrong shape.
        handlers: the block kinds read, each with its `Handler`.
        plain_text: ``None``, ``""`` and a string are content (no block / one text block), and string items are
            text blocks.
        not_a_list: the error for content that is not a list (``"..., got <value>"`` follows).
        unsupported: the error for a kind without a handler, with ``{}`` for the kind.
    """

    kind_of: Callable[[object, JSONPath], tuple[object, _B]]
    handlers: Mapping[str, Handler[_B]]
    plain_text: bool
    not_a_list: str
    unsupported: str


def walk_blocks(content: object, where: JSONPath, dialect: Dialect[_B], context: object = None) -> list[Block]:
    """The ``Block`` list of one message's ``content`` at ``where``, read by ``dialect``; ``context`` is passed
    to each handler (a reader's cache-point list, say).

    Raises:
        BadRecord: content of the wrong shape, a block of the wrong shape, a kind without a handler, or whatever
            a handler raises; ``where`` names the value.
    """
    if dialect.plain_text:
        if content is None or content == "":
            return []
        if isinstance(content, str):
            return [Block("text", content)]
    if not isinstance(content, list):
        raise BadRecord(where, f"{dialect.not_a_list}, got {_short(content)}")
    out: list[Block] = []
    for i, part in enumerate(content):
        at = (*where, i)
        if dialect.plain_text and isinstance(part, str):
            out.append(Block("text", part))
            continue
        kind, body = dialect.kind_of(part, at)
        handler = dialect.handlers.get(kind) if isinstance(kind, str) else None
        try:
            if handler is None:
                raise Unsupported
            block = handler(body, at, len(out), context)
        except Unsupported:
            raise BadRecord(at, dialect.unsupported.format(_short(kind))) from None
        if block is not None:
            out.append(block)
    return out

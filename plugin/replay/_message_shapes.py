"""The message and content-block dicts the readers build before ``promptcache.replay._messages`` reads them.

A reader whose log is not in a shape ``normalise_message`` reads (OpenAI Responses items, OpenTelemetry GenAI parts,
Langfuse observations...) converts it to one of these first: an OpenAI Chat Completions message
(``ChatMessage``, with ``ToolCall`` entries) or an Anthropic Messages content block (``ContentBlock``). The field
values are as logged (``object``): ``normalise_message`` checks them and names the offending one.
"""

from __future__ import annotations

from typing import TypedDict

__all__ = ["ChatMessage", "ContentBlock", "ToolCall", "ToolFunction"]


class ToolFunction(TypedDict):
    """``function`` of an OpenAI tool call: the tool's ``name`` and its ``arguments`` (JSON text)."""

    name: object
    arguments: object


class ToolCall(TypedDict):
    """One entry of an OpenAI message's ``tool_calls``."""

    id: object
    type: str
    function: ToolFunction


class _Role(TypedDict):
    role: str


class ChatMessage(_Role, total=False):
    """An OpenAI Chat Completions message: ``role`` and ``content`` (a string, parts, or ``None``), an assistant's
    ``tool_calls``, a tool message's ``tool_call_id``."""

    content: object
    tool_calls: list[ToolCall]
    tool_call_id: object


class _Type(TypedDict):
    type: str


class ContentBlock(_Type, total=False):
    """An Anthropic Messages content block: ``text``; ``tool_use`` (``id``, ``name``, ``input``); ``tool_result``
    (``tool_use_id``, ``content``)."""

    text: object
    id: object
    name: object
    input: object
    tool_use_id: object
    content: object

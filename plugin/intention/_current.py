"""The intention a tool call is filed under: the call's own intention argument, else the user's latest message."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.messages import HumanMessage

__all__ = ["current_intention", "state_messages"]


def _message_text(message: object) -> str:
    content = getattr(message, "content", "")
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return " ".join(p for p in parts if p)


def current_intention(
    args: Mapping[str, object] | None, messages: Sequence[object], intention_arg: str = "intention"
) -> str | None:
    """The intention `IntentionCache` files a tool call under (also used by ``promptcache replay``).

    Args:
        args: the tool call's arguments (``tool_call["args"]``).
        messages: the agent state's messages up to the call (LangChain messages, oldest first).
        intention_arg: the argument that carries the intention when a tool has one.

    Returns:
        ``args[intention_arg]`` when it is a non-blank string, else the text of the latest ``HumanMessage`` (its
        string content, or its text blocks joined by spaces); ``None`` when that is blank or there is none.
    """
    intention = (args or {}).get(intention_arg)
    if not isinstance(intention, str) or not intention.strip():
        intention = ""
        for message in reversed(messages):
            if isinstance(message, HumanMessage):
                intention = _message_text(message)
                break
    return intention if intention.strip() else None


def state_messages(state: object) -> list[object]:
    """The messages of an agent state (a mapping or an object with ``messages``)."""
    if isinstance(state, Mapping):
        return list(state.get("messages") or [])
    return list(getattr(state, "messages", None) or [])

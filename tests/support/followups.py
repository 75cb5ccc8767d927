"""Fixtures shared by the event-loop, denial and scope tests."""

from __future__ import annotations

from langchain_core.messages import AIMessage


def _call(name: str, args: dict, i: int = 0) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{name}-{i}"}])

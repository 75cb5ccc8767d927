"""Models and tools shared by the processor and agent-middleware tests."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage


def _call(name: str, args: dict, i: int = 0) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{name}-{i}"}])


def _cache_mark(message: Any) -> Any:
    meta = (getattr(message, "response_metadata", None) or {}).get("promptcache") or {}
    return meta.get("cache") or meta.get("intention_cache")

"""Which tools a request offers, so a cached reply that calls another tool is not replayed.

A default key covers the request's tool schemas, so its hits always offer the same tools; a fixed key
(``ResponseCache.context(key="faq")``) or a key function may not, and an entry can outlive a change of the agent's
tools. Replaying a step that calls a tool the agent no longer has makes the agent call a tool it cannot run, so
`ResponseCache` treats such a hit as a miss.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage

from promptcache.response_cache._keys import KEY_PREFIX

__all__ = ["is_custom_key", "offered_tool_names", "tools_called_but_not_offered"]


def _name(tool: object) -> str | None:
    """A tool's name: ``BaseTool.name``; a dict's ``name``, ``function.name`` (OpenAI) or ``toolSpec.name``
    (Bedrock Converse); a function's or class's ``__name__``."""
    if isinstance(tool, Mapping):
        for inner in (tool, tool.get("function"), tool.get("toolSpec")):
            if isinstance(inner, Mapping) and isinstance(inner.get("name"), str):
                found: str = inner["name"]
                return found
        return None
    name = getattr(tool, "name", None)
    if isinstance(name, str):
        return name
    name = getattr(tool, "__name__", None)
    return name if isinstance(name, str) else None


def offered_tool_names(request: ModelRequest) -> set[str]:
    """Names of the tools ``request`` offers the model: its ``tools``, plus the schema tools of a structured-output
    ``ToolStrategy`` (its ``schema_specs``: a reply may call them to answer)."""
    names = {n for n in map(_name, request.tools or ()) if n is not None}
    specs = getattr(request.response_format, "schema_specs", None)
    if isinstance(specs, Iterable):
        names.update(n for n in (getattr(s, "name", None) for s in specs) if isinstance(n, str))
    return names


def tools_called_but_not_offered(response: ModelResponse, request: ModelRequest) -> list[str]:
    """Names of the tools the ``AIMessage`` replies in ``response`` call that ``request`` does not offer (``[]``
    when every call is to an offered tool, or there are none). The offered names are only collected when a reply
    calls a tool."""
    called = [c.get("name") for m in response.result if isinstance(m, AIMessage) for c in m.tool_calls]
    if not called:
        return []
    offered = offered_tool_names(request)
    return sorted({str(n) for n in called if n not in offered})


def is_custom_key(key: str, agent_id: str) -> bool:
    """Whether ``key`` was made by `custom_key` for ``agent_id`` (a fixed key or a key function's), not by
    `build_response_cache_key`. ``agent_id`` holds no ``":"`` (``ResponseCache`` checks it), so the parts
    after ``response:{agent_id}:`` are: an optional 8-hex scope part, then ``key`` / ``key+{step}`` for a custom key
    (a default key has its 32-hex digest there)."""
    head = f"{KEY_PREFIX}:{agent_id}:"
    if not key.startswith(head):
        return False
    rest = key[len(head) :]
    if len(rest) > 9 and rest[8] == ":" and all(c in "0123456789abcdef" for c in rest[:8]):
        rest = rest[9:]
    return rest.startswith(("key:", "key+"))

"""Token usage as logs record it -> ``Usage`` (uncached input, cache read, cache write and its 1-hour part, output).

Field meanings, by source:

- Anthropic Messages API ``usage``: ``input_tokens`` (uncached), ``cache_read_input_tokens``,
  ``cache_creation_input_tokens`` and ``cache_creation.ephemeral_1h_input_tokens`` /
  ``ephemeral_5m_input_tokens``, ``output_tokens``.
- Bedrock Converse ``TokenUsage``: ``inputTokens`` (uncached), ``cacheReadInputTokens``, ``cacheWriteInputTokens``,
  ``cacheDetails: [{"ttl": "5m" | "1h", "inputTokens"}]``, ``outputTokens`` (Amazon Nova's InvokeModel body:
  ``cacheReadInputTokenCount`` / ``cacheWriteInputTokenCount``).
- OpenAI Chat Completions ``usage``: ``prompt_tokens`` (the whole prompt, cached part included),
  ``prompt_tokens_details.cached_tokens`` (read from the cache), ``completion_tokens``; OpenAI reports no cache
  writes.
- LangChain ``AIMessage.usage_metadata``: ``input_tokens`` (the whole prompt), ``input_token_details.cache_read`` /
  ``cache_creation``, ``output_tokens``.

A count that is absent reads as 0. An integral float such as ``5.0`` (as some log shippers re-encode numbers) is
that integer; ``4.5``, a string, a bool, a negative number or one of 2**32 or more is not a count: it reads as 0 and
is reported, the record then keeping no usage (`promptcache.replay._usage_checks.read_count`).
"""

from __future__ import annotations

from typing import Any

from ._transcript import Usage
from ._usage_checks import read_count

__all__ = ["anthropic_usage", "converse_usage", "count_of", "message_usage", "openai_usage", "langchain_usage"]


def count_of(obj: object, key: str) -> int:
    """The token count ``obj[key]`` by the rule of the module docstring (0 when ``obj`` is not an object); a value
    that is not a count is noted for the reader (`promptcache.replay._usage_checks.read_count`)."""
    return read_count(obj, key)


def _is_1h(detail: object) -> bool:
    return isinstance(detail, dict) and detail.get("ttl") == "1h"


def anthropic_usage(raw: object) -> Usage | None:
    """``Usage`` from an Anthropic ``usage`` object (``None`` when ``raw`` is not an object)."""
    if not isinstance(raw, dict):
        return None
    return Usage(
        input_tokens=count_of(raw, "input_tokens"),
        cache_read_tokens=count_of(raw, "cache_read_input_tokens"),
        cache_write_tokens=count_of(raw, "cache_creation_input_tokens"),
        cache_write_1h_tokens=count_of(raw.get("cache_creation"), "ephemeral_1h_input_tokens"),
        output_tokens=count_of(raw, "output_tokens"),
    )


def converse_usage(raw: object) -> Usage | None:
    """``Usage`` from a Bedrock Converse ``usage`` object (``None`` when ``raw`` is not an object)."""
    if not isinstance(raw, dict):
        return None
    details = raw.get("cacheDetails")
    one_hour = sum(count_of(d, "inputTokens") for d in (details if isinstance(details, list) else []) if _is_1h(d))
    return Usage(
        count_of(raw, "inputTokens"),
        count_of(raw, "cacheReadInputTokens") or count_of(raw, "cacheReadInputTokenCount"),
        count_of(raw, "cacheWriteInputTokens") or count_of(raw, "cacheWriteInputTokenCount"),
        one_hour,
        count_of(raw, "outputTokens"),
    )


def openai_usage(raw: object) -> Usage | None:
    """``Usage`` from an OpenAI ``usage`` object: uncached input is ``prompt_tokens - cached_tokens``."""
    if not isinstance(raw, dict):
        return None
    cached = count_of(raw.get("prompt_tokens_details"), "cached_tokens")
    return Usage(max(count_of(raw, "prompt_tokens") - cached, 0), cached, 0, 0, count_of(raw, "completion_tokens"))


def langchain_usage(raw: object) -> Usage | None:
    """``Usage`` from LangChain ``usage_metadata``: uncached input is the total minus cache read and creation."""
    if not isinstance(raw, dict):
        return None
    details = raw.get("input_token_details")
    read, write = count_of(details, "cache_read"), count_of(details, "cache_creation")
    return Usage(max(count_of(raw, "input_tokens") - read - write, 0), read, write, 0, count_of(raw, "output_tokens"))


def message_usage(body: dict[str, Any]) -> Usage | None:
    """The usage a recorded assistant message carries, in whichever of the shapes above (``None`` if none):
    ``usage_metadata`` (LangChain), else ``usage`` with ``prompt_tokens`` (OpenAI), ``inputTokens`` (Converse) or
    ``input_tokens`` (Anthropic)."""
    if isinstance(body.get("usage_metadata"), dict):
        return langchain_usage(body["usage_metadata"])
    raw = body.get("usage")
    if not isinstance(raw, dict):
        return None
    if "prompt_tokens" in raw:
        return openai_usage(raw)
    if "inputTokens" in raw:
        return converse_usage(raw)
    if "input_tokens" in raw:
        return anthropic_usage(raw)
    return None

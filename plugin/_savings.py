"""What a call saved, from the usage a provider reported: the counting behind each plugin's ``stats()``.

Prices come from the Bedrock on-demand table of `promptcache._pricing` (USD per 1M tokens, with its
sources); a model not in it counts tokens but no dollars. Usage follows LangChain's ``usage_metadata``:
``input_tokens`` includes the prompt-cache tokens of ``input_token_details`` (``cache_read``, ``cache_creation``),
as langchain-aws reports Converse ``cacheReadInputTokens`` / ``cacheWriteInputTokens``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar, cast

from promptcache._metrics import PluginMetrics
from promptcache._model_attrs import first_str_attr
from promptcache._pricing import ModelPrice, price_for

if TYPE_CHECKING:
    from langchain_core.messages.ai import UsageMetadata

__all__ = [
    "cache_point_dollars",
    "call_cost",
    "count_cache_usage",
    "count_memory_turn",
    "count_reply_hit",
    "count_stream_usage",
    "model_id_of",
    "price_or_none",
]

_T = TypeVar("_T")
_U = TypeVar("_U", bound=Mapping[str, object])
_MODEL_ID_FIELDS = ("base_model_id", "model_id", "model_name", "model")


@lru_cache(maxsize=256)
def price_or_none(model_id: str | None) -> ModelPrice | None:
    """The price of ``model_id`` in `promptcache._pricing.KNOWN_PRICES`, or ``None`` (unknown model)."""
    if not model_id:
        return None
    try:
        return price_for(model_id)
    except KeyError:
        return None


def model_id_of(model: object) -> str | None:
    """The provider model id of a chat model: the first non-empty string among ``base_model_id``, ``model_id``,
    ``model_name`` and ``model`` (`promptcache._model_attrs.first_str_attr`: a name a model lacks costs a dict
    lookup, not the ``AttributeError`` pydantic's ``__getattr__`` raises)."""
    return first_str_attr(model, _MODEL_ID_FIELDS, non_empty=True)


def _details(usage: UsageMetadata) -> tuple[int, int, int, int]:
    """(input tokens at full price, cache read, cache write, output) of a ``usage_metadata`` dict."""
    details = usage.get("input_token_details") or {}
    read = int(details.get("cache_read") or 0)
    write = int(details.get("cache_creation") or 0)
    total_in = int(usage.get("input_tokens") or 0)
    return max(0, total_in - read - write), read, write, int(usage.get("output_tokens") or 0)


def call_cost(usage: UsageMetadata, price: ModelPrice, ttl_s: float = 300.0) -> float:
    """USD a call with ``usage`` cost: fresh input, cache reads and writes (``ttl_s`` picks the write tier) and
    output, each at its per-1M-token price."""
    fresh, read, write, out = _details(usage)
    return float(fresh * price.input + read * price.read + write * price.write(ttl_s) + out * price.output) / 1e6


def cache_point_dollars(read: int, write: int, price: ModelPrice, ttl_s: float = 300.0) -> float:
    """USD saved by prompt caching on one call versus the same tokens at the input price: reads save
    ``input - read`` per token, writes cost ``write - input`` more (negative savings when writes dominate)."""
    return float(read * (price.input - price.read) - write * (price.write(ttl_s) - price.input)) / 1e6


def count_reply_hit(metrics: PluginMetrics, response: _T, model: object) -> _T:
    """Count a ResponseCache hit and what it saved: the whole call the recorded reply cost (its stored
    ``usage_metadata``: input and output tokens; dollars when the model's price is known). Returns ``response``."""
    metrics.hit()
    for message in getattr(response, "result", ()):
        marker = (getattr(message, "response_metadata", None) or {}).get("promptcache")
        if isinstance(marker, Mapping) and isinstance(marker.get("usage"), Mapping):
            usage = marker["usage"]
            price = price_or_none(model_id_of(model))
            metrics.saved(
                input_tokens=int(usage.get("input_tokens") or 0),
                output_tokens=int(usage.get("output_tokens") or 0),
                dollars=None if price is None else call_cost(usage, price),
            )
            break
    return response


def count_cache_usage(metrics: PluginMetrics, usage: UsageMetadata | None, model_id: str, ttl_s: float) -> None:
    """Count one Bedrock call's prompt-cache use from its ``usage_metadata``: a hit when it read from the cache, a
    miss otherwise, a write when it wrote; cache read/write tokens; ``input_tokens_saved`` = tokens read from the
    cache (billed at the read price instead of the input price); dollars by `cache_point_dollars`."""
    if not usage:
        return
    _, read, write, _ = _details(usage)
    metrics.hit() if read else metrics.miss()
    if write:
        metrics.write()
    price = price_or_none(model_id)
    metrics.saved(
        input_tokens=read,
        cache_read_tokens=read,
        cache_write_tokens=write,
        dollars=None if price is None else cache_point_dollars(read, write, price, ttl_s),
    )


def count_stream_usage(metrics: PluginMetrics, chunks: Iterator[_T], model_id: str, ttl_s: float) -> Iterator[_T]:
    """Yield ``chunks`` (``ChatGenerationChunk``) unchanged, counting the usage the stream reports (one call)."""
    usage: UsageMetadata | None = None
    for chunk in chunks:
        found = getattr(getattr(chunk, "message", None), "usage_metadata", None)
        if found:
            usage = cast("UsageMetadata", dict(found))  # a copy of the chunk's usage_metadata
        yield chunk
    count_cache_usage(metrics, usage, model_id, ttl_s)


def count_memory_turn(metrics: PluginMetrics, update: _U) -> _U:
    """Count one typed-memory turn from the loader's state update: a hit when the thread's memories came from the
    agent state (no store read), a miss when they were read from the store. Returns ``update``."""
    turn = update.get("memory_turn")  # the loader's own dict
    read = (turn.get("read") if isinstance(turn, Mapping) else None) or []
    metrics.miss() if any(kind != "project_state" for kind in read) else metrics.hit()
    return update

"""The caller's own (manual) ``cachePoint`` blocks in a Converse request: counting them, refusing a layout Bedrock
rejects, and fitting the TTL of every point placement adds around them.

Bedrock's rules for the points of one request, in prefix order ``toolConfig.tools`` -> ``system`` -> ``messages``:

- at most :data:`~promptcache.cache_points._model_info.BEDROCK_MAX_CACHE_POINTS` (4) points (Amazon Bedrock user guide,
  "Prompt caching for faster model inference", https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html,
  table "Supported models, regions, and limits": maximum cache checkpoints per request);
- ``cachePoint.ttl`` is ``"5m"`` (the default when omitted) or ``"1h"`` (API reference, ``CachePointBlock``:
  https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CachePointBlock.html), and ``"1h"`` only on
  the models the user guide's TTL section lists (``ModelInfo.allowed_ttls``);
- TTLs never increase along the prompt: a ``1h`` point may not follow a ``5m`` one (same user-guide page, 1-hour
  TTL section; Anthropic "Prompt caching", "Mixing different TTLs": longer TTLs must come before shorter ones).
  Each breach is a ``ValidationException``;
- a point is never a message's first block, nor directly after a reasoning block; on Nova never in
  ``toolConfig.tools`` (Nova caches system and messages only: ``ModelInfo.cachable_fields``) nor directly after a
  ``toolResult`` or an image (:func:`~promptcache.cache_points._strategy.point_blocker`; docs/architecture.md "Bedrock cache
  points").

Placement only adds blocks, so a caller's layout that already breaks a rule cannot be repaired without removing or
changing the caller's blocks: :func:`check_manual_layout` refuses it with a ``ValueError`` before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from promptcache.cache_points._model_info import BEDROCK_MAX_CACHE_POINTS, TTLS, ModelInfo
from promptcache.cache_points._strategy import cache_point_block, is_cache_point, point_blocker

__all__ = ["check_manual_layout", "count_manual_cache_points", "fit_added_ttls", "iter_cache_points"]


def iter_cache_points(
    system: Sequence[Any], messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None
) -> Iterator[tuple[str, list[Any] | Sequence[Any], int]]:
    """Every ``cachePoint`` block in prefix order (tools, system, messages) as ``(where, blocks, index)``.

    ``where`` names the position (``"tools[1]"``, ``"system[2]"``, ``"messages[3].content[1]"``); ``blocks[index]`` is
    the point. A message whose ``content`` is a string holds none.
    """
    for name, blocks in (("tools", tools or []), ("system", system)):
        for i, block in enumerate(blocks):
            if is_cache_point(block):
                yield f"{name}[{i}]", blocks, i
    for m, message in enumerate(messages):
        content = message.get("content")
        if isinstance(content, list):
            for i, block in enumerate(content):
                if is_cache_point(block):
                    yield f"messages[{m}].content[{i}]", content, i


def count_manual_cache_points(
    system: Sequence[Any], messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None
) -> int:
    """``cachePoint`` blocks already present in the request (tools, system, and list-valued message contents)."""
    return sum(1 for _ in iter_cache_points(system, messages, tools))


def _ttl_of(block: Mapping[str, Any]) -> Any:
    ttl = block["cachePoint"].get("ttl")
    return "5m" if ttl is None else ttl


def _check_positions(model_info: ModelInfo, points: list[tuple[str, Any, int]], tools: Sequence[Any] | None) -> None:
    """Refuse a point where Bedrock rejects one (module docstring), naming its position and the reason."""
    model = model_info.model_id or "this model"
    for where, blocks, i in points:
        why = None
        if blocks is tools:
            if model_info.supports_prompt_cache and "tools" not in model_info.cachable_fields:
                why = (
                    f"is in toolConfig.tools, which {model} cannot cache (it caches {list(model_info.cachable_fields)})"
                )
        elif where.startswith("messages"):
            before = [b for b in blocks[:i] if not is_cache_point(b)]
            if not before:
                why = "is the message's first block (a cache point must follow the content it caches)"
            elif (blocker := point_blocker(before[-1], model_info.is_nova)) is not None:
                why = f"follows {blocker}, which {model} does not accept a cache point after"
        if why is not None:
            raise ValueError(f"cachePoint at {where} {why}; Bedrock rejects this request: move or remove the point")


def check_manual_layout(
    model_info: ModelInfo, system: Sequence[Any], messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None
) -> int:
    """Validate the caller's own points against the rules in the module docstring; return how many there are.

    Args:
        model_info: the model (its ``max_cache_points`` lowers the limit of 4 when it supports caching).
        system: the request's system blocks, as given to :func:`promptcache.cache_points.place_cache_points`.
        messages: the request's messages, likewise.
        tools: the request's tools (or ``None``), likewise.

    Raises:
        ValueError: more points than allowed (the count, the limit and the positions are named); a ``ttl`` other
            than ``"5m"``/``"1h"``, or one the model does not offer (``model_info.allowed_ttls``, as for the
            configured TTL); a ``1h`` point after a ``5m`` one (both positions named); a point in a position
            Bedrock rejects (a message's first block, after a reasoning block; on Nova in the tools or after a
            ``toolResult``/image), its position and the reason named.
    """
    points = list(iter_cache_points(system, messages, tools))
    _check_positions(model_info, points, tools)
    limit = BEDROCK_MAX_CACHE_POINTS
    if model_info.supports_prompt_cache:
        limit = min(limit, model_info.max_cache_points)
    if len(points) > limit:
        where = ", ".join(p[0] for p in points)
        raise ValueError(
            f"the request already holds {len(points)} cachePoint blocks ({where}); "
            f"{model_info.model_id or 'this model'} accepts at most {limit} per request (Bedrock "
            f"prompt caching limit); remove {len(points) - limit} of them"
        )
    shortest: tuple[str, str] | None = None  # (where, ttl) of the earliest 5m point seen so far
    for where, blocks, i in points:
        ttl = _ttl_of(blocks[i])
        if ttl not in TTLS:
            raise ValueError(f"cachePoint ttl at {where} must be one of {list(TTLS)} (or omitted), got {ttl!r}")
        if model_info.supports_prompt_cache and ttl not in model_info.allowed_ttls:
            raise ValueError(
                f"cachePoint ttl {ttl!r} at {where} is not allowed for model "
                f"{model_info.model_id or '<custom>'!r}; allowed: {list(model_info.allowed_ttls)} "
                f"(source: {model_info.source}; pass a ModelInfo with allowed_ttls to override)"
            )
        if shortest is None and ttl == TTLS[0]:
            shortest = (where, ttl)
        elif shortest is not None and TTLS.index(ttl) > TTLS.index(shortest[1]):
            raise ValueError(
                f"cachePoint ttl {ttl!r} at {where} follows a {shortest[1]!r} cache point at "
                f"{shortest[0]}; Bedrock requires cache TTLs to be non-increasing along tools -> "
                f"system -> messages"
            )
    return len(points)


def fit_added_ttls(
    system: list[Any], messages: list[dict[str, Any]], tools: list[Any] | None, added: set[int], ttl: str | None
) -> None:
    """Give each point placement added (``id(block) in added``) a TTL that keeps TTLs non-increasing, in place.

    An added point takes the configured ``ttl`` (``None`` = ``"5m"``), lowered to the shortest TTL of a caller's
    point before it, and raised to the longest TTL of a caller's point after it. The caller's layout must have passed
    :func:`check_manual_layout`, so the floor never exceeds the cap.

    Raising rather than dropping a point that precedes a caller's ``1h`` point is the cheaper correct choice:
    the caller's ``1h`` point already writes the whole prefix up to it at the 1-hour rate, and a write is billed
    once however many points lie inside it, so an added ``1h`` point before it costs nothing more, while it still
    gives later requests (and other conversations sharing the prefix, for the system anchor) a point to read from.
    A dropped point would save nothing and lose those reads.
    """
    # The arguments are lists, so each point's ``blocks`` is one of them (or a message's content list).
    points = cast("list[tuple[str, list[Any], int]]", list(iter_cache_points(system, messages, tools)))
    want = TTLS.index(ttl) if ttl in TTLS else 0
    # floors[k]: longest TTL rank among the caller's points at or after position k.
    floors = [0] * (len(points) + 1)
    for k in range(len(points) - 1, -1, -1):
        _, blocks, i = points[k]
        own = 0 if id(blocks[i]) in added else TTLS.index(_ttl_of(blocks[i]))
        floors[k] = max(floors[k + 1], own)
    cap = len(TTLS) - 1
    for k, (_, blocks, i) in enumerate(points):
        block = blocks[i]
        if id(block) in added:
            rank = max(min(want, cap), floors[k + 1])
            if TTLS.index(_ttl_of(block)) != rank:
                blocks[i] = cache_point_block(TTLS[rank])
        else:
            cap = min(cap, TTLS.index(_ttl_of(block)))

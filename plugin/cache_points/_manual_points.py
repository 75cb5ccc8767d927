"""The caller's own (manual) ``cachePoint`` blocks in a Converse request: counting them, refusing a layout Bedrock
rejects, and fitting the TTL of every point placement adds around them.

The rules are those of `promptcache.cache_points._rules.PLACEMENT_RULES` (one table per model family, each
rule with its source): ``scan_request`` checks the positions of the points while it walks the request, and
`check_points` the count and TTL rules over the points it found (prefix order ``toolConfig.tools`` ->
``system`` -> ``messages``).

Placement only adds blocks, so a caller's layout that already breaks a rule cannot be repaired without removing or
changing the caller's blocks: it is refused with a ``ValueError`` before anything is sent.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import cast

from promptcache.cache_points._model_info import BEDROCK_MAX_CACHE_POINTS, TTLS, ModelInfo
from promptcache.cache_points._request_scan import Point, scan_request
from promptcache.cache_points._strategy import cache_point_block, is_cache_point

__all__ = ["check_manual_layout", "check_points", "count_manual_cache_points", "fit_added_ttls", "iter_cache_points"]


def iter_cache_points(
    system: Sequence[object], messages: Sequence[Mapping[str, object]], tools: Sequence[object] | None
) -> Iterator[tuple[str, list[object] | Sequence[object], int]]:
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
    system: Sequence[object], messages: Sequence[Mapping[str, object]], tools: Sequence[object] | None
) -> int:
    """``cachePoint`` blocks already present in the request (tools, system, and list-valued message contents)."""
    return sum(1 for _ in iter_cache_points(system, messages, tools))


def _ttl_of(block: object) -> object:
    """The ``ttl`` of a point the scan found (a dict whose ``cachePoint`` is a mapping), ``"5m"`` when absent."""
    ttl = cast("Mapping[str, Mapping[str, object]]", block)["cachePoint"].get("ttl")
    return "5m" if ttl is None else ttl


def check_manual_layout(
    model_info: ModelInfo,
    system: Sequence[object],
    messages: Sequence[Mapping[str, object]],
    tools: Sequence[object] | None,
) -> int:
    """Validate the caller's own points against every rule of the placement table; return how many there are.

    Args:
        model_info: the model (its ``max_cache_points`` lowers the limit of 4 when it supports caching).
        system: the request's system blocks (a list), as given to ``place_cache_points``.
        messages: the request's messages, likewise.
        tools: the request's tools (or ``None``), likewise.

    Raises:
        ValueError: a point in a position the table forbids (see ``scan_request``), or one of
            `check_points`' errors.
    """
    return check_points(model_info, scan_request(model_info, list(system), messages, list(tools or [])).points)


def check_points(model_info: ModelInfo, points: Sequence[Point]) -> int:
    """The count and TTL rules of the table over the request's points (prefix order, from ``scan_request``, which
    checked their positions); return how many there are.

    Raises:
        ValueError: any point on a model without prompt caching; more points than allowed (the count, the limit
            and the positions are named); a ``type`` other than ``"default"`` (the Converse API's only
            ``CachePointBlock`` type); a ``ttl`` other
            than ``"5m"``/``"1h"``, or one the model does not offer (``model_info.allowed_ttls``, as for the
            configured TTL); a ``1h`` point after a ``5m`` one (both positions named).
    """
    if not points:
        return 0
    if not model_info.supports_prompt_cache:
        raise ValueError(
            f"the request holds {len(points)} cachePoint block(s) ({', '.join(p[0] for p in points)}), but "
            f"{model_info.model_id or 'this model'} offers no prompt caching on Bedrock (rule 'uncached-model'; "
            f"source: {model_info.source}); remove them, or pass cache_model_info=get_model_info(model_id, "
            f"supports_prompt_cache=True, max_cache_points=..., min_tokens_per_cache_point=...) if it does"
        )
    limit = min(BEDROCK_MAX_CACHE_POINTS, model_info.max_cache_points)
    if len(points) > limit:
        where = ", ".join(p[0] for p in points)
        raise ValueError(
            f"the request already holds {len(points)} cachePoint blocks ({where}); "
            f"{model_info.model_id or 'this model'} accepts at most {limit} per request (Bedrock "
            f"prompt caching limit, rule 'max-points'); remove {len(points) - limit} of them"
        )
    shortest: tuple[str, str] | None = None  # (where, ttl) of the earliest 5m point seen so far
    for where, blocks, i in points:
        point_type = cast("Mapping[str, Mapping[str, object]]", blocks[i])["cachePoint"].get("type")
        if point_type != "default":
            raise ValueError(
                f"cachePoint type at {where} must be 'default' (the only CachePointBlock type in the Bedrock "
                f"Converse API reference), got {point_type!r}"
            )
        ttl = _ttl_of(blocks[i])
        if ttl not in TTLS:
            raise ValueError(f"cachePoint ttl at {where} must be one of {list(TTLS)} (or omitted), got {ttl!r}")
        if ttl not in model_info.allowed_ttls:
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
    system: list[object],
    messages: list[dict[str, object]],
    tools: list[object] | None,
    added: set[int],
    ttl: str | None,
) -> None:
    """Give each point placement added (``id(block) in added``) a TTL that keeps TTLs non-increasing, in place.

    An added point takes the configured ``ttl`` (``None`` = ``"5m"``), lowered to the shortest TTL of a caller's
    point before it, and raised to the longest TTL of a caller's point after it. The caller's layout must have passed
    `check_manual_layout`, so the floor never exceeds the cap.

    Raising rather than dropping a point that precedes a caller's ``1h`` point is the cheaper correct choice:
    the caller's ``1h`` point already writes the whole prefix up to it at the 1-hour rate, and a write is billed
    once however many points lie inside it, so an added ``1h`` point before it costs nothing more, while it still
    gives later requests (and other conversations sharing the prefix, for the system anchor) a point to read from.
    A dropped point would save nothing and lose those reads.
    """
    # The arguments are lists, so each point's ``blocks`` is one of them (or a message's content list).
    points = cast("list[tuple[str, list[object], int]]", list(iter_cache_points(system, messages, tools)))
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

"""One walk over a Converse request: shapes checked, the caller's points inside a ``toolResult`` moved out, and every
``cachePoint`` found and checked against the position rules of `promptcache.cache_points._rules.PLACEMENT_RULES`.

``place_cache_points`` runs `scan_request` once per request; the strategies' ``CacheStrategyConfig`` takes
the `ScannedMessages` it returns without walking them again (and walks plain message lists with
`scan_messages`, without the position rules, as it always has).

With the default counter, a request whose messages hold no ``cachePoint`` is walked by `_scan_plain`: the leading
messages equal to the kept copy of the conversation's previous request take its counts (one C-level ``==`` per
message, `promptcache.cache_points._prefix_counts`), and only the messages after them are checked, serialised and
counted; any other request takes the full walk.

Hoisting: a ``cachePoint`` inside a ``toolResult``'s ``content`` is moved to right after that ``toolResult`` block,
where Bedrock takes it (``ToolResultContentBlock`` has no cache point; langchain-aws moves a ``ToolMessage``'s points
there too). Messages that need no move are the caller's objects; the others are copies, and the moved point blocks
are the caller's own objects (``fit_added_ttls`` tells the caller's points from added ones by identity).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from promptcache.cache_points._model_info import ModelInfo
from promptcache.cache_points._prefix_counts import CountedMessages, Unkept, freeze, serialise
from promptcache.cache_points._rules import blocking_rule, family_of
from promptcache.cache_points._tokens import (
    MESSAGE_OVERHEAD_TOKENS,
    block_tokens,
    count_text_tokens,
    default_count_tokens,
    json_tokens,
)
from promptcache.cache_points._tokens import _memo as _tokens_memo

__all__ = ["Point", "RequestScan", "ScannedMessages", "scan_messages", "scan_request"]

#: ``(where, blocks, index)``: ``blocks[index]`` is the point; ``where`` names it (``"messages[3].content[1]"``).
Point = tuple[str, list[object], int]

_START = object()  # "no block before this one"


class ScannedMessages(list):  # type: ignore[type-arg]
    """Messages that `scan_messages` checked and hoisted (a list of the message dicts).

    Attributes:
        message_points: ``cachePoint`` blocks in the messages' list contents.
        tokens: each message's ``default_count_tokens``, counted in the same walk (``None`` when not asked for).
        lists_only: every message's ``content`` is known to be a list (``False``: not known).
        fingerprints: ``(known, used, kept)`` when the messages were compared with the conversation's previous
            request: ``known`` holds that request's message fingerprints (``CacheStrategy.fingerprint``) for the
            leading messages found equal to it, and the fingerprints taken of messages ``< kept`` (the kept ones)
            go into ``used``, the next request's ``known`` (`CountedMessages.fingerprints`); ``None`` otherwise.
    """

    __slots__ = ("fingerprints", "lists_only", "message_points", "tokens")

    def __init__(self, messages: Iterable[object], message_points: int) -> None:
        super().__init__(messages)
        self.message_points = message_points
        self.tokens: list[int] | None = None
        self.lists_only = False
        self.fingerprints: tuple[dict[int, str], dict[int, str], int] | None = None


@dataclass
class RequestScan:
    """What `scan_request` found.

    Attributes:
        messages: the checked messages, caller's points hoisted out of tool results.
        points: every ``cachePoint`` in prefix order (tools, system, messages).
        counted: the kept messages and counts for the conversation's next request (`CountedMessages`), or
            ``None`` (not counted, or the request holds a ``cachePoint`` or a value orjson refuses).
    """

    messages: ScannedMessages
    points: list[Point]
    counted: CountedMessages | None = None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _is_point(block: Mapping[str, object]) -> bool:
    return isinstance(block.get("cachePoint"), Mapping)


class _Checker:
    """The position rules for one request's points (``family`` ``None``: collect points, check nothing)."""

    __slots__ = ("family", "model", "tools_refused")

    def __init__(self, model_info: ModelInfo | None) -> None:
        self.family = family_of(model_info) if model_info is not None else None
        self.model = (model_info.model_id or "this model") if model_info is not None else ""
        self.tools_refused = (
            model_info is not None and model_info.supports_prompt_cache and "tools" not in model_info.cachable_fields
        )

    def check(self, where: str, previous: object, previous_where: str, first: str) -> None:
        """Refuse the point at ``where`` whose preceding block is ``previous`` (``_START`` when none)."""
        if self.family is None:
            return
        if previous is _START:
            why = f"is {first} (rule 'first-block': a cache point must follow the content it caches)"
        elif isinstance(previous, Mapping) and _is_point(previous):
            why = f"directly follows another cachePoint at {previous_where} (rule 'consecutive')"
        else:
            found = blocking_rule(previous, self.family)
            if found is None:
                return
            rule, blocker = found
            why = f"follows {blocker}, which {self.model} does not accept a cache point after (rule {rule.name!r})"
        raise ValueError(f"cachePoint at {where} {why}; Bedrock rejects this request: move or remove the point")


def _scan_entries(name: str, entries: list[object], item: str, checker: _Checker, points: list[Point]) -> None:
    """Check ``system`` / ``tools`` entries are dicts; collect and check their points."""
    for entry in entries:  # a loop, not all(<generator>): no generator frame per request
        if type(entry) is not dict or "cachePoint" in entry:
            break
    else:
        return  # plain dicts, no point: nothing to check or collect
    previous: object = _START
    for i, entry in enumerate(entries):
        if type(entry) is not dict and not isinstance(entry, Mapping):
            raise TypeError(f"{name}[{i}] must be a dict ({item}), got {_short(entry)}")
        if "cachePoint" in entry and _is_point(entry):
            where = f"{name}[{i}]"
            if name == "tools" and checker.tools_refused:
                raise ValueError(
                    f"cachePoint at {where} is in toolConfig.tools, which {checker.model} cannot cache (rule "
                    f"'uncachable-field'); Bedrock rejects this request: move or remove the point"
                )
            first = "the first system block" if name == "system" else "the first entry of toolConfig.tools"
            checker.check(where, previous, f"{name}[{i - 1}]", first)
            points.append((where, entries, i))
        previous = entry


def _hoisted(block: Mapping[str, object]) -> list[object] | None:
    """``[toolResult without its points, *its points]`` when ``block`` is a ``toolResult`` holding points."""
    result = block.get("toolResult")
    if type(result) is not dict and not isinstance(result, Mapping):
        return None
    inner = result.get("content")
    if type(inner) is not list:
        return None
    for b in inner:
        if (type(b) is dict or isinstance(b, Mapping)) and "cachePoint" in b and _is_point(b):
            break
    else:
        return None
    moved = [b for b in inner if isinstance(b, Mapping) and _is_point(b)]
    kept = [b for b in inner if not (isinstance(b, Mapping) and _is_point(b))]
    return [{**block, "toolResult": {**result, "content": kept}}, *moved]


def _scan_content(m: int, content: list[object], checker: _Checker, points: list[Point]) -> list[object] | None:
    """Collect and check the points of message ``m``'s list ``content``; the hoisted content when it changed."""
    rebuilt: list[object] | None = None
    previous: object = _START
    found: list[int] = []
    for i, block in enumerate(content):
        if type(block) is dict or isinstance(block, Mapping):
            if "cachePoint" in block and _is_point(block):
                at = i if rebuilt is None else len(rebuilt)
                checker.check(f"messages[{m}].content[{at}]", previous, f"messages[{m}].content[{at - 1}]", _FIRST)
                found.append(at)
            elif "toolResult" in block:
                moved = _hoisted(block)
                if moved is not None:
                    if rebuilt is None:
                        rebuilt = content[:i]
                    for extra in moved:
                        if extra is not moved[0]:
                            at = len(rebuilt)
                            where = f"messages[{m}].content[{at}]"
                            checker.check(where, previous, f"messages[{m}].content[{at - 1}]", _FIRST)
                            found.append(at)
                        rebuilt.append(extra)
                        previous = extra
                    continue
        if rebuilt is not None:
            rebuilt.append(block)
        previous = block
    final = content if rebuilt is None else rebuilt
    points.extend((f"messages[{m}].content[{at}]", final, at) for at in found)
    return rebuilt


_FIRST = "the message's first block"


def _quick(content: list[object], counting: bool) -> int | None:
    """For a list ``content`` with no cache point anywhere (tool results included) and only plain-dict blocks: its
    tokens by the default counter (0 when not ``counting``). ``None`` otherwise (the full walk takes over)."""
    total = 0
    memo = _tokens_memo
    for block in content:
        if type(block) is not dict or "cachePoint" in block:
            return None
        if "type" not in block:
            if "text" in block:
                if counting:
                    text = block["text"]
                    if type(text) is str:  # the memo, looked up inline (count_text_tokens on a hit)
                        known = memo.get(hash(text))
                        if known is not None and known >> 32 == len(text):
                            total += known & 0xFFFFFFFF
                            continue
                    total += count_text_tokens(text if type(text) is str else str(text))
                continue
            if "toolUse" in block:
                use = block["toolUse"]
                if type(use) is dict:
                    if counting:
                        name = use.get("name", "")
                        total += count_text_tokens(name if type(name) is str else str(name))
                        total += json_tokens(use.get("input"))
                    continue
            elif "toolResult" in block:
                result = block["toolResult"]
                inner = result.get("content") if type(result) is dict else None
                sub = _quick(inner, counting) if type(inner) is list else None
                if sub is None:
                    return None
                total += sub
                continue
        if counting:
            total += block_tokens(block)
    return total


def _scan_messages(
    messages: Sequence[object], checker: _Checker, points: list[Point], counting: bool = False
) -> ScannedMessages:
    if isinstance(messages, (str, bytes, bytearray, Mapping)) or not isinstance(messages, Sequence):
        raise TypeError(f"messages must be a list of dicts, got {type(messages).__name__}: {_short(messages)}")
    out: list[object] | None = None
    tokens: list[int] = []
    before = len(points)
    for m, message in enumerate(messages):
        if type(message) is not dict and not isinstance(message, Mapping):
            raise TypeError(f"messages[{m}] must be a dict with 'role' and 'content', got {_short(message)}")
        role = message.get("role")
        if role != "user" and role != "assistant":
            raise ValueError(f"messages[{m}]['role'] must be 'user' or 'assistant', got {role!r}")
        content = message.get("content")
        if type(content) is list:
            quick = _quick(content, counting) if type(message) is dict and "tool_calls" not in message else None
            if quick is not None:
                tokens.append(quick + MESSAGE_OVERHEAD_TOKENS)
                continue
            rebuilt = _scan_content(m, content, checker, points)
            if rebuilt is not None:
                if out is None:
                    out = list(messages)
                out[m] = message = {**message, "content": rebuilt}
        elif type(content) is not str and (
            isinstance(content, (bytes, Mapping)) or not isinstance(content, (str, Sequence))
        ):
            raise TypeError(f"messages[{m}]['content'] must be a str or a list of content blocks, got {content!r}")
        if counting:
            tokens.append(default_count_tokens(message))
    scanned = ScannedMessages(out if out is not None else list(messages), len(points) - before)
    scanned.tokens = tokens if counting else None
    return scanned


_ROLES = frozenset(("user", "assistant"))
_POINT_KEY = b'"cachePoint":'  # only a key looks like this in JSON: a quote inside a string is escaped


def _scan_plain(
    messages: object, previous: CountedMessages | None
) -> tuple[ScannedMessages, CountedMessages | None] | None:
    """The walk for a request with no ``cachePoint`` anywhere in its messages, counting only the messages that do
    not equal the kept copy of ``previous`` (`promptcache.cache_points._prefix_counts`). ``None`` when the request is
    not of that kind (then `_scan_messages` walks it, and raises what it raises).

    The leading messages equal to the kept ones were checked when they were kept (dicts whose ``role`` is
    user/assistant, whose ``content`` is a list or a str, with no point, that orjson writes natively), so equality
    says the same of them. Each later message is checked here: the same shapes, and its own JSON (`serialise`), which
    shows whether it holds a point anywhere or a value orjson refuses; with no point in the request nothing is
    hoisted.
    """
    if type(messages) is not list:
        return None
    reused = previous.reusable(messages) if previous is not None else 0
    if previous is not None and reused:
        taken = previous.take(reused)  # the previous request's lists, appended to, when all of it is reused
        if taken is not None:
            kept, tokens, ends = taken
        else:
            kept = previous.kept[:reused]  # type: ignore[index]
            tokens, ends = previous.tokens[:reused], previous.ends[:reused]
        end = ends[-1]
        first_str = previous.first_str if previous.first_str < reused else len(messages)
    else:
        kept, tokens, ends, end, first_str = [], [], [], 0, len(messages)
    keeping = True
    for m in range(reused, len(messages)):
        message = messages[m]
        if type(message) is not dict:
            return None
        content = message.get("content")
        try:
            if message["role"] not in _ROLES:
                return None
        except (KeyError, TypeError):  # no role, or an unhashable one
            return None
        if type(content) is str:
            first_str = min(first_str, m)
        elif type(content) is not list:
            return None
        raw = serialise(message)
        if raw is None or _POINT_KEY in raw:
            return None
        quick = _quick(content, True) if type(content) is list and "tool_calls" not in message else None
        tokens.append(quick + MESSAGE_OVERHEAD_TOKENS if quick is not None else default_count_tokens(message))
        end += 1 + len(raw)
        ends.append(end)
        if keeping:
            try:
                kept.append(freeze(message))
            except Unkept:  # kept up to here: the next request reuses at most that far
                keeping = False
    scanned = ScannedMessages(messages, 0)
    scanned.tokens = tokens
    scanned.lists_only = first_str >= len(messages)
    if len(kept) < len(tokens):  # a message that is not kept ends what the next request can reuse
        ends, tokens = ends[: len(kept)], tokens[: len(kept)]
    counted = CountedMessages(None, ends, tokens, kept, min(first_str, len(kept)))
    carried = previous.fingerprints if previous is not None and reused else None
    known = {i: f for i, f in carried.items() if i < reused} if carried else {}
    scanned.fingerprints = (known, counted.fingerprints, len(kept))
    return scanned, counted


def scan_messages(messages: Sequence[object]) -> ScannedMessages:
    """``messages`` checked (dicts, ``role`` user/assistant, ``content`` a str or a list) and hoisted (module
    docstring), in one walk; no position rule is checked.

    Raises:
        TypeError: not a list of dicts, or a ``content`` that is neither a str nor a list (``messages[i]`` named).
        ValueError: a ``role`` other than ``"user"``/``"assistant"`` (``messages[i]['role']`` named).
    """
    return _scan_messages(messages, _Checker(None), [])


def scan_request(
    model_info: ModelInfo,
    system: list[object],
    messages: Sequence[object],
    tools: list[object] | None,
    *,
    count_tokens: bool = False,
    previous: CountedMessages | None = None,
) -> RequestScan:
    """Check a Converse request's shapes and the positions of the caller's points, in one walk over it.

    Args:
        model_info: the model (its family picks the rules).
        system: the request's system blocks (a list).
        messages: the request's messages (a list of ``{"role", "content"}`` dicts).
        tools: ``toolConfig["tools"]`` (a list) or ``None``.
        count_tokens: also count each message's tokens (``default_count_tokens``) in the same walk
            (``RequestScan.messages.tokens``).
        previous: with ``count_tokens``, the conversation's previous request (``RequestScan.counted`` of its scan):
            the leading messages equal to its kept copy take its counts instead of being counted again.

    Returns:
        The `RequestScan`: the hoisted messages and every point in prefix order.

    Raises:
        TypeError: a system block, tool entry or message that is not a dict, or a bad ``content`` (named).
        ValueError: a bad ``role``; a point where a rule of the table forbids one (its position, the rule's name and
            the reason named): first in a message / the system / the tools, right after another point, right
            after a blocker of the model's family (reasoning; on Claude a non-PDF document; on Nova a tool result
            or an image), or in ``toolConfig.tools`` on a model that does not cache tools.
    """
    checker = _Checker(model_info)
    points: list[Point] = []
    if tools is not None:
        _scan_entries("tools", tools, "a Converse tool entry", checker, points)
    _scan_entries("system", system, "a Converse system block", checker, points)
    if count_tokens:
        plain = _scan_plain(messages, previous)
        if plain is not None:
            return RequestScan(plain[0], points, plain[1])
    scanned = _scan_messages(messages, checker, points, count_tokens)
    return RequestScan(scanned, points)

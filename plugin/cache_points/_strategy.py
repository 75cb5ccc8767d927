"""The cache-strategy contract: configuration, placements, results, and the shared helpers of every strategy.

Names follow Roo-Code's Bedrock cache-strategy documentation: ``CacheStrategyConfig`` (model info, system
prompt, messages, whether to cache, previous placements), ``CachePointPlacement`` (``index``, ``type``,
``tokens_covered``), ``CacheResult`` (system blocks, messages with cache points, placements). Strategies are pure:
they read the config and return a new result; nothing is mutated and nothing is stored.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from promptcache.cache_points._converse_blocks import CachePointBlock, cache_point_block, is_blank_text, is_cache_point
from promptcache.cache_points._fingerprints import message_fingerprint
from promptcache.cache_points._model_info import BEDROCK_MAX_CACHE_POINTS, ModelInfo
from promptcache.cache_points._request_scan import ScannedMessages, scan_messages
from promptcache.cache_points._rules import family_of, point_blocker
from promptcache.cache_points._tokens import CountTokens, default_count_tokens

__all__ = [
    "CachePointPlacement",
    "CacheResult",
    "CacheStrategy",
    "CacheStrategyConfig",
    "cache_point_block",
    "is_cache_point",
]


@dataclass(frozen=True)
class CachePointPlacement:
    """Where one message cache point goes.

    Attributes:
        index: the message index (0-based, into ``CacheStrategyConfig.messages``); the point follows that message.
        type: ``"message"`` (the only kind strategies return; ``"system"`` is reported by ``CacheResult``).
        tokens_covered: tokens from the message after the previous point (or the first message) through this one
            (the definition in Roo-Code's documentation, its "Important" note).
        fingerprint: a hash of the message at ``index`` when placed; lets a later call find the same message after
            the history was truncated (excluded from equality and ``repr``).
    """

    index: int
    type: str = "message"
    tokens_covered: int = 0
    fingerprint: str | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict (what the placement store keeps)."""
        return {
            "index": self.index,
            "type": self.type,
            "tokens_covered": self.tokens_covered,
            "fingerprint": self.fingerprint,
        }

    @classmethod
    def _message(cls, index: int, tokens_covered: int, fingerprint: str | None) -> CachePointPlacement:
        """``CachePointPlacement(index, "message", tokens_covered, fingerprint)`` for the strategies' own values (an int
        index >= 0, an int count), built without the frozen dataclass's per-field ``object.__setattr__``."""
        placement = object.__new__(cls)
        placement.__dict__.update(index=index, type="message", tokens_covered=tokens_covered, fingerprint=fingerprint)
        return placement

    @classmethod
    def from_value(cls, value: object) -> CachePointPlacement:
        """Accept a placement or a dict with ``index`` (+ ``type``, ``tokens_covered``/``tokensCovered``).

        Raises:
            TypeError / ValueError: not a placement, or a missing/negative/non-int ``index`` (named in the message).
        """
        if isinstance(value, CachePointPlacement):
            placement = value
        elif isinstance(value, Mapping):
            fields: Any = value  # unchecked here: the checks below name a bad field's value
            placement = cls(
                index=fields.get("index"),
                type=fields.get("type", "message"),
                tokens_covered=fields.get("tokens_covered", fields.get("tokensCovered", 0)),
                fingerprint=fields.get("fingerprint"),
            )
        else:
            raise TypeError(f"previous placement must be a CachePointPlacement or dict, got {value!r}")
        if isinstance(placement.index, bool) or not isinstance(placement.index, int) or placement.index < 0:
            raise ValueError(f"placement index must be an int >= 0, got {placement.index!r}")
        return placement


@dataclass
class CacheResult:
    """A strategy's answer.

    Attributes:
        system: the system prompt as Converse blocks (``[{"text": ...}]``), with a cache point appended when one
            was placed there; ``[]`` without a system prompt.
        messages: the messages (a new list; string content turned into ``[{"text": ...}]``) with a cache point
            block appended to each placed message; placed and string-content messages are copies, the others the
            input's own objects. The input messages are never modified.
        placements: the message placements, in index order (store them and pass them back next turn).
        system_cache_point: whether a point follows the system prompt.
        system_tokens: the system prompt's token count. message_tokens: each message's count.
    """

    system: list[object]
    messages: list[dict[str, object]]
    placements: list[CachePointPlacement]
    system_cache_point: bool = False
    system_tokens: int = 0
    message_tokens: list[int] = field(default_factory=list)

    @property
    def points_used(self) -> int:
        """Cache points this result adds (system + messages)."""
        return len(self.placements) + int(self.system_cache_point)


@dataclass
class CacheStrategyConfig:
    """Input of a strategy.

    Args:
        model_info: the model's limits (`promptcache.cache_points.get_model_info`).
        system_prompt: ``None``, a string, or a list of Converse system blocks.
        messages: ``[{"role": "user" | "assistant", "content": str | list[block]}, ...]`` (Converse or Anthropic
            blocks). A caller's ``cachePoint`` inside a ``toolResult``'s content is moved right after the
            ``toolResult`` (``promptcache.cache_points._request_scan``, on copies); the caller's points count toward
            the 4. Checked in one walk, on construction.
        use_prompt_cache: ``False`` returns the messages with no points.
        previous_placements: the placements returned for this conversation last time (``CachePointPlacement`` or
            dicts); stale ones are dropped or rebased, never applied blindly.
        count_tokens: ``count_tokens(message) -> int`` (tokens, >= 0); default
            `promptcache.cache_points.default_count_tokens` (tiktoken ``cl100k_base``, offline).
        max_points: points this strategy may use for system + messages; default ``model_info.max_cache_points``
            capped at Bedrock's 4. Callers that already spent slots (tools, manual points) pass what is left.
        ttl: ``None``/``"5m"`` or ``"1h"`` for the points placed; checked against ``model_info.allowed_ttls``.
        prefix_tokens: tokens the cache prefix holds before ``system_prompt`` (the tool specs, or a system prompt
            that already carries the caller's own point and is therefore passed as ``None``). Bedrock's minimum
            applies to the whole prefix up to a point; ``MultiPointStrategy`` ignores it (Roo-Code counts the system
            prompt alone), ``AnchoredTailStrategy`` adds it.

    Raises:
        TypeError / ValueError: a bad model info, message (role, shape), placement, budget or TTL; the message
            names the value and its position. Raised on construction, before any work.
    """

    model_info: ModelInfo
    system_prompt: str | Sequence[object] | None
    messages: Sequence[Mapping[str, object]]
    use_prompt_cache: bool = True
    previous_placements: Sequence[CachePointPlacement | Mapping[str, object]] | None = None
    count_tokens: CountTokens | None = None
    max_points: int | None = None
    ttl: str | None = None
    prefix_tokens: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.model_info, ModelInfo):
            raise TypeError(f"model_info must be a ModelInfo, got {type(self.model_info).__name__}")
        if not isinstance(self.messages, ScannedMessages):  # place_cache_points' messages are checked already
            self.messages = scan_messages(self.messages)
        system = self.system_prompt
        if system is not None and type(system) is not list and not isinstance(system, (str, Sequence)):
            raise TypeError(f"system_prompt must be a str, a list of blocks or None, got {self.system_prompt!r}")
        self.previous_placements = [
            p
            if type(p) is CachePointPlacement and type(p.index) is int and p.index >= 0
            else CachePointPlacement.from_value(p)
            for p in (self.previous_placements or [])
        ]
        if self.count_tokens is not None and not callable(self.count_tokens):
            raise TypeError(f"count_tokens must be callable, got {self.count_tokens!r}")
        if self.max_points is not None and (
            isinstance(self.max_points, bool) or not isinstance(self.max_points, int) or self.max_points < 0
        ):
            raise ValueError(f"max_points must be an int >= 0, got {self.max_points!r}")
        if isinstance(self.prefix_tokens, bool) or not isinstance(self.prefix_tokens, int) or self.prefix_tokens < 0:
            raise ValueError(f"prefix_tokens must be an int >= 0, got {self.prefix_tokens!r}")
        self.model_info.check_ttl(self.ttl)


# `CacheStrategy.tokens_between` calls answered by summing the range before running sums are built: a bound, not
# measured (the shipped strategies ask for a handful of ranges per request).
_DIRECT_SUMS = 8


class CacheStrategy(ABC):
    """Base of placement strategies: token counts, placement rules, and building the result.

    Subclasses implement `determine_optimal_cache_points`. Token counts are taken once, on construction.

    Raises:
        ValueError: ``count_tokens`` returned something other than an int >= 0 (the message index is named).
    """

    def __init__(self, config: CacheStrategyConfig) -> None:
        self.config = config
        self.model_info = config.model_info
        self._count = config.count_tokens or default_count_tokens
        self._family = family_of(config.model_info)
        self.system_token_count = self._calculate_system_tokens()
        counted: list[int] | None = getattr(config.messages, "tokens", None)  # counted in place_cache_points' walk
        self.message_tokens: list[int]
        if self._count is default_count_tokens and counted is not None and len(counted) == len(config.messages):
            self.message_tokens = list(counted)
        elif self._count is default_count_tokens:  # an int >= 0 by construction
            self.message_tokens = [default_count_tokens(m) for m in config.messages]
        else:
            self.message_tokens = [
                self.checked_count(self._count(m), f"messages[{i}]") for i, m in enumerate(config.messages)
            ]
        self._prefix: list[int] | None = None  # running sums, built once ranges are asked for often
        self._sums = 0

    @property
    def stored_placements(self) -> list[CachePointPlacement]:
        """``config.previous_placements``, which the config turned into `CachePointPlacement`s on construction."""
        return cast("list[CachePointPlacement]", self.config.previous_placements or [])

    @classmethod
    def tools_point_wanted(cls, model_info: ModelInfo, tool_tokens: int, has_system_prompt: bool, budget: int) -> bool:
        """Whether `promptcache.cache_points.place_cache_points` puts a point after the tool specs (before the
        strategy runs; it takes one of ``budget`` slots). Default (the multi-point rule): tools are a cachable field
        (never on Nova) and the specs alone reach the minimum."""
        return (
            budget > 0
            and "tools" in model_info.cachable_fields
            and not model_info.is_nova
            and tool_tokens >= model_info.min_tokens_per_cache_point
        )

    @abstractmethod
    def determine_optimal_cache_points(self) -> CacheResult:
        """Return the result for this config (see `CacheResult`)."""

    # -- counting ------------------------------------------------------------------------------------------
    @staticmethod
    def checked_count(value: object, what: str) -> int:
        """``value`` when it is an int >= 0 (a token count returned by ``count_tokens`` for ``what``).

        Raises:
            ValueError: anything else (bool, negative, float, str, None), naming ``count_tokens(<what>)`` and the
                value.
        """
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"count_tokens({what}) must return an int >= 0, got {value!r}")
        return value

    def _calculate_system_tokens(self) -> int:
        system = self.config.system_prompt
        if not system:
            return 0
        content = system if isinstance(system, str) else list(system)
        return self.checked_count(self._count({"role": "system", "content": content}), "system_prompt")

    def tokens_between(self, start: int, end: int) -> int:
        """Tokens of messages ``start..end`` inclusive (0 when the range is empty)."""
        if end < start:
            return 0
        prefix = self._prefix
        if prefix is None:
            self._sums += 1
            if self._sums <= _DIRECT_SUMS:  # a strategy asks for a few ranges: summing them costs less than all sums
                return sum(self.message_tokens[start : end + 1])
            prefix = self._prefix = [0, *itertools.accumulate(self.message_tokens)]
        return prefix[end + 1] - prefix[start]

    def meets_min_token_threshold(self, token_count: int) -> bool:
        """``token_count >= model_info.min_tokens_per_cache_point``."""
        return token_count >= self.model_info.min_tokens_per_cache_point

    def point_budget(self) -> int:
        """Points available for system + messages: the model's maximum (never above 4) less the caller's own points
        already in the system prompt and messages, and at most ``max_points``."""
        limit = min(self.model_info.max_cache_points, BEDROCK_MAX_CACHE_POINTS)
        system, messages = self.config.system_prompt, self.config.messages
        if isinstance(system, list):
            for b in system:  # a plain dict without the key is no point: no call for it
                if (type(b) is not dict or "cachePoint" in b) and is_cache_point(b):
                    limit -= 1
        if isinstance(messages, ScannedMessages):
            limit -= messages.message_points
        else:  # replaced after construction
            limit -= scan_messages(messages).message_points
        if self.config.max_points is not None:
            limit = min(limit, self.config.max_points)
        return max(limit, 0)

    # -- placement rules -----------------------------------------------------------------------------------
    def is_placement_target(self, index: int) -> bool:
        """Whether a point may follow message ``index``: a user message (Roo-Code's rule) that
        `point_allowed_after` accepts."""
        return self.config.messages[index].get("role") == "user" and self.point_allowed_after(index)

    def point_allowed_after(self, index: int) -> bool:
        """Whether Bedrock accepts a point after message ``index`` (any role): its content is not empty (a point is
        never a message's first block), does not end in a blank text block (`is_blank_text`) nor in a block
        a rule of ``promptcache.cache_points._rules.PLACEMENT_RULES`` names for the model's family (reasoning; on
        Claude a non-PDF document; on Nova a tool result or an image) -- each a Bedrock ``ValidationException``."""
        content = self.config.messages[index].get("content")
        if type(content) is not list:
            if isinstance(content, str):
                return bool(content.strip())
            if not isinstance(content, Sequence):
                return False
        for block in reversed(content):  # the last block that is not a cache point
            if type(block) is dict and "cachePoint" not in block:
                text = block.get("text")
                if type(text) is str and len(block) == 1:  # a Converse text block: blank or not
                    return bool(text.strip())
                return not is_blank_text(block) and point_blocker(block, self._family) is None
            if not is_cache_point(block):
                return not is_blank_text(block) and point_blocker(block, self._family) is None
        return False

    def fingerprint(self, index: int) -> str:
        """A short hash of message ``index`` (role + content without cache points).

        Messages that `place_cache_points` proved equal to the conversation's previous request take the fingerprint
        that request took of them (``ScannedMessages.fingerprints``): the same value, without serialising them."""
        carried: tuple[dict[int, str], dict[int, str], int] | None = getattr(self.config.messages, "fingerprints", None)
        if carried is None or type(index) is not int or index < 0:
            return self._fingerprint(index)
        known, used, kept = carried
        found = known.get(index)
        if found is None:
            found = self._fingerprint(index)
        if index < kept:
            used[index] = found
        return found

    def _fingerprint(self, index: int) -> str:
        message = self.config.messages[index]
        content = message.get("content")
        if type(content) is list:
            # the list as it is when it holds no point (the same JSON as a copy without points)
            if not all(type(b) is dict and "cachePoint" not in b for b in content):
                content = [b for b in content if not is_cache_point(b)]
        elif isinstance(content, Sequence) and not isinstance(content, str):
            content = [b for b in content if not is_cache_point(b)]
        return message_fingerprint(message.get("role"), content)

    def create_cache_point(self) -> CachePointBlock:
        """The block to insert (with the config's TTL)."""
        return cache_point_block(self.config.ttl)

    # -- result ------------------------------------------------------------------------------------------
    def system_blocks(self, with_point: bool) -> list[object]:
        """The system prompt as Converse blocks, plus a cache point when ``with_point``."""
        system = self.config.system_prompt
        if not system:
            return []
        blocks: list[object] = (
            [{"text": system}]
            if isinstance(system, str)
            else [dict(b) if isinstance(b, Mapping) else b for b in system]
        )
        if with_point:
            blocks.append(self.create_cache_point())
        return blocks

    def apply_cache_points(self, placements: Sequence[CachePointPlacement]) -> list[dict[str, object]]:
        """The messages with a cache point block after each placed message's content: a new list, where a placed
        message (and one whose content is a string, turned into ``[{"text": ...}]``) is a copy and every other
        message is the input's own object (shared, not copied). The input messages are never modified."""
        placed = {p.index for p in placements}
        messages = self.config.messages
        out: list[dict[str, object]] = list(messages)  # type: ignore[arg-type]
        # with every content a list (``scan_request`` knows), only the placed messages change
        visit = sorted(placed) if getattr(messages, "lists_only", False) else range(len(out))
        for i in visit:
            message = out[i]
            content = message.get("content")
            if type(content) is list and i not in placed:
                continue
            copy = dict(message)
            blocks: list[object] = (
                [{"text": content}] if isinstance(content, str) else list(cast("Iterable[object]", content or []))
            )
            if i in placed and not (blocks and is_cache_point(blocks[-1])):
                blocks.append(self.create_cache_point())
            copy["content"] = blocks
            out[i] = copy
        return out

    def format_result(self, system_point: bool, placements: Sequence[CachePointPlacement]) -> CacheResult:
        """Build the `CacheResult` (copies only)."""
        return CacheResult(
            system=self.system_blocks(system_point),
            messages=self.apply_cache_points(placements),
            placements=list(placements),
            system_cache_point=system_point,
            system_tokens=self.system_token_count,
            message_tokens=list(self.message_tokens),
        )

    def format_without_cache_points(self) -> CacheResult:
        """The result with no cache points at all."""
        return self.format_result(False, [])

"""Placement configs for the messages the replay builds, checked once per conversation instead of once per request.

The replay drives the real placement strategies (``promptcache.cache_points``) once per request, on the growing
list of placeholder messages it built for the conversation (``promptcache.replay._ours``,
``promptcache.replay._multipoint``). ``CacheStrategyConfig``'s constructor checks every message (role, content
shape, caller cache points inside tool results) each time, which makes a conversation of n calls cost n² checks.
``checked_messages`` runs those checks once on the whole list; ``replay_config`` then builds each request's config
over a prefix of it without walking it again. ``ReplayBudget`` is the strategies' point budget for such messages,
which never hold a cache point of their own (the replay builds them without one), so the budget needs no walk.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from typing import Any

from promptcache.cache_points import CachePointPlacement, CacheStrategyConfig, default_count_tokens
from promptcache.cache_points._model_info import BEDROCK_MAX_CACHE_POINTS
from promptcache.cache_points._rules import family_of

__all__ = ["ReplayBudget", "checked_messages", "replay_config"]


def checked_messages(info: Any, messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` after ``CacheStrategyConfig``'s checks, run once (raises what it raises)."""
    return [dict(m) if not isinstance(m, dict) else m for m in CacheStrategyConfig(info, None, messages).messages]


def replay_config(**fields: Any) -> CacheStrategyConfig:
    """A ``CacheStrategyConfig`` over messages that ``checked_messages`` already checked (a prefix of them, maybe
    with a last message rebuilt the same way): the fields as given, the previous placements read as the
    constructor reads them, and no walk over the messages."""
    config = object.__new__(CacheStrategyConfig)
    for item in dataclasses.fields(CacheStrategyConfig):
        if item.name in fields:
            value = fields[item.name]
        elif item.default is not dataclasses.MISSING:
            value = item.default
        else:
            raise TypeError(f"replay_config needs {item.name!r}")
        object.__setattr__(config, item.name, value)
    previous = [CachePointPlacement.from_value(p) for p in (config.previous_placements or [])]
    object.__setattr__(config, "previous_placements", previous)
    config.model_info.check_ttl(config.ttl)
    return config


class ReplayBudget:
    """Mixin for a placement strategy run on replay-built messages: the message token counts are the ones the
    replay made (``message_tokens``, one per message, instead of one ``count_tokens`` call each), and
    ``point_budget`` does not count the caller's points (there are none), so neither walks the messages."""

    config: CacheStrategyConfig
    model_info: Any
    message_tokens: list[int]
    _prefix: list[int]
    _count: Any
    _family: str
    system_token_count: int

    def __init__(self, config: CacheStrategyConfig, message_tokens: Sequence[int] | None = None) -> None:
        if message_tokens is None or len(message_tokens) != len(config.messages):
            super().__init__(config)  # type: ignore[call-arg]
            return
        self.config = config
        self.model_info = config.model_info
        self._count = config.count_tokens or default_count_tokens
        self._family = family_of(config.model_info)
        self.system_token_count = self._calculate_system_tokens()  # type: ignore[attr-defined]
        self.message_tokens = list(message_tokens)
        self._prefix = [0, *itertools.accumulate(self.message_tokens)]

    def point_budget(self) -> int:
        limit = min(int(self.model_info.max_cache_points), BEDROCK_MAX_CACHE_POINTS)
        if self.config.max_points is not None:
            limit = min(limit, self.config.max_points)
        return max(limit, 0)

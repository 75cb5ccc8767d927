"""The options of the Bedrock cache-point wrapper and processor that are checked on their own: the strategy name
(`StrategyName`, `resolve_strategy`) and ``cache_control`` (`check_cache_control`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from promptcache.cache_points import AnchoredTailStrategy, CacheStrategy, MultiPointStrategy
from promptcache.cache_points._model_info import TTLS

__all__ = ["STRATEGIES", "StrategyName", "check_cache_control", "resolve_strategy"]


#: The placement strategy names accepted by ``strategy=`` (the keys of ``STRATEGIES``).
StrategyName = Literal["anchored-tail", "multi-point"]

#: Strategy names accepted by ``strategy=``.
STRATEGIES: dict[str, type[CacheStrategy]] = {"anchored-tail": AnchoredTailStrategy, "multi-point": MultiPointStrategy}


def resolve_strategy(strategy: object) -> type[CacheStrategy]:
    """``"anchored-tail"`` | ``"multi-point"`` | a ``CacheStrategy`` subclass -> the class.

    Typed to take any value: the option comes from users, so a bad one is refused here with a clear message.

    Raises:
        ValueError: an unknown name (the known ones are listed). TypeError: anything else.
    """
    if isinstance(strategy, str):
        try:
            return STRATEGIES[strategy]
        except KeyError:
            raise ValueError(
                f"unknown cache-point strategy {strategy!r}; known: "
                f"{', '.join(repr(k) for k in STRATEGIES)}, or a CacheStrategy subclass"
            ) from None
    if isinstance(strategy, type) and issubclass(strategy, CacheStrategy) and strategy is not CacheStrategy:
        return strategy
    raise TypeError(f"strategy must be 'anchored-tail', 'multi-point' or a CacheStrategy subclass, got {strategy!r}")


def check_cache_control(cache_control: object) -> None:
    """``cache_control`` must be ``None`` or a dict whose optional ``"ttl"`` is ``"5m"`` or ``"1h"`` (the Converse
    ``CachePointBlock.ttl`` values; whether the model allows ``"1h"`` is checked with the model's ``ModelInfo``).

    Raises:
        TypeError: not a dict (a str such as ``"1h"``, a bool, a list), named with its value.
        ValueError: a ``ttl`` other than ``"5m"``/``"1h"``/``None``.
    """
    if cache_control is None:
        return
    if not isinstance(cache_control, Mapping):
        raise TypeError(
            f"cache_control must be a dict such as {{'ttl': '1h'}} or None, got "
            f"{type(cache_control).__name__}: {cache_control!r:.80}"
        )
    ttl = cache_control.get("ttl")
    if ttl is not None and (not isinstance(ttl, str) or ttl not in TTLS):
        raise ValueError(f"cache_control['ttl'] must be one of {list(TTLS)} or absent, got {ttl!r:.80}")

"""Every strategy the replay compares, by name (``STRATEGIES``): the baseline, the reference placements
(``promptcache.replay._strategies``), the plugin's own (``promptcache.replay._ours``), the log's own layout
(``promptcache.replay._as_logged``) and the hindsight reference (``promptcache.replay._hindsight``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from promptcache._pricing import ModelPrice

from ._as_logged import AsLoggedStrategy
from ._hindsight import HindsightStrategy
from ._models import CacheRules
from ._ours import AnchoredTailStrategy, MultiPointAdapter
from ._strategies import LangChainAwsStrategy, LastMessageStrategy, NoCacheStrategy, Strategy

__all__ = ["STRATEGIES", "PlacementName", "StrategyName", "check_strategy_names", "make_strategy"]

#: The names of the strategies the replay ships (the keys of ``STRATEGIES`` before any user adds one). Names given
#: by users (the CLI's ``--strategies``, ``run_replay(strategies=...)``) stay ``str``: a user may register their
#: own ``Strategy`` subclass, and `check_strategy_names` refuses the unknown ones.
StrategyName = Literal[
    "none", "last-message", "langchain-aws", "multi-point", "anchored-tail", "as-logged", "hindsight"
]
#: The placements a user can install (the rows the decision chooses among).
PlacementName = Literal["last-message", "langchain-aws", "multi-point", "anchored-tail"]

STRATEGIES: dict[str, type[Strategy]] = {
    NoCacheStrategy.name: NoCacheStrategy,
    LastMessageStrategy.name: LastMessageStrategy,
    LangChainAwsStrategy.name: LangChainAwsStrategy,
    MultiPointAdapter.name: MultiPointAdapter,
    AnchoredTailStrategy.name: AnchoredTailStrategy,
    AsLoggedStrategy.name: AsLoggedStrategy,
    HindsightStrategy.name: HindsightStrategy,
}


def check_strategy_names(names: Iterable[str]) -> None:
    """Check that every name is in ``STRATEGIES``.

    Raises:
        KeyError: the first unknown name (the message lists the known ones).
    """
    for name in names:
        if name not in STRATEGIES:
            raise KeyError(f"unknown strategy {name!r}; known: {', '.join(STRATEGIES)}")


def make_strategy(name: str, rules: CacheRules, price: ModelPrice | None = None, ttl_s: float = 300.0) -> Strategy:
    """A strategy by name (``STRATEGIES`` keys; add a ``Strategy`` subclass there to compare your own).

    Raises:
        KeyError: unknown name (the message lists the known ones).
        StrategyUnavailable: its implementation is not installed.
    """
    try:
        cls = STRATEGIES[name]
    except KeyError:
        raise KeyError(f"unknown strategy {name!r}; known: {', '.join(STRATEGIES)}") from None
    return cls(rules, price, ttl_s)

"""One strategy's bill over a replay (`StrategyTotals`) and adding one billed request to it (`account`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._simulator import RequestCost

__all__ = ["AS_LOGGED", "COMBINED", "NO_VARIANTS", "StrategyTotals", "account"]

#: The product row: our placement with the ResponseCache in front (hits never reach Bedrock).
COMBINED = "anchored-tail+response-cache"
#: The row of the log's own layout.
AS_LOGGED = "as-logged"
#: Rows without ``@1h`` / keep-alive variants.
NO_VARIANTS = frozenset({"none", COMBINED, "hindsight"})


@dataclass
class StrategyTotals:
    """One strategy's bill over the replay. Token counts are tokens; costs USD (input side: input+read+write)."""

    name: str
    description: str = ""
    requests: int = 0
    model_calls: int = 0
    input_tokens: int = 0
    read_tokens: int = 0
    write_tokens: int = 0
    write_1h_tokens: int = 0
    requests_with_read: int = 0
    cost_usd: float = 0.0
    output_cost_usd: float = 0.0
    cumulative_usd: list[float] = field(default_factory=list)
    unavailable: str | None = None
    #: input-side USD over the requests that carry logged usage only (the like-for-like figure against the bill)
    logged_cost_usd: float = 0.0
    #: whether the row covers only the requests with logged usage (``as-logged``: the log's layout is known there)
    logged_only: bool = False
    keepalive_calls: int = 0  # ``+keep-alive`` variants: the keep-alive calls billed (``promptcache.replay._variants``)

    @property
    def read_share(self) -> float:
        return self.requests_with_read / self.requests if self.requests else 0.0


def account(row: StrategyTotals, cost: RequestCost, out_cost: float, logged: bool) -> None:
    """Add one billed request to ``row`` (``logged``: it carries logged usage)."""
    row.requests += 1
    row.model_calls += 1
    row.input_tokens += cost.input_tokens
    row.read_tokens += cost.read_tokens
    row.write_tokens += cost.write_tokens
    row.write_1h_tokens += cost.write_1h_tokens
    row.requests_with_read += cost.cache_hit
    row.cost_usd += cost.cost_usd
    if logged:
        row.logged_cost_usd += cost.cost_usd
    row.output_cost_usd += out_cost
    row.cumulative_usd.append(row.cost_usd)

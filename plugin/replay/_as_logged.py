"""Logged usage as evidence: the logged bill, the ``as-logged`` strategy, and the fidelity figure comparing them.

- ``LoggedTotals`` adds up what the log says each call was billed: uncached input, cache-read and cache-write tokens
  (5-minute and 1-hour), priced with each call's own model (``Message.model``) at that model's prices (with ``--model``,
  a call of a model without a price at the forced model's; the bill is then not compared:
  ``ReplayResult.billed_mismatch``).
- ``AsLoggedStrategy`` (``as-logged``) replays the log's own cache layout through the simulator:

  * Claude Code (``meta["format"] == "claude-code"``): a breakpoint at the end of each cached level of the
    system/tools prefix (``promptcache.replay._sizes.hidden_levels``) and one at the end of the last message (Claude Code's ``cache_control`` placement), with the TTL the call logged —
    1 hour where its ``cache_creation`` says ``ephemeral_1h`` (``Usage.cache_write_1h_tokens``), else 5 minutes; a
    call that wrote nothing keeps the conversation's previous TTL. Where a call wrote at both TTLs, the prefix
    point takes 1 hour and the last-message point 5 minutes (TTLs may not increase along the prompt).
  * Bedrock invocation logs: the ``cachePoint`` blocks each request carried, from ``meta["cache_points"]`` as
    ``promptcache.replay._bedrock_logs`` records them — per request, a list of ``{"where": "tools" | "system" |
    "message", "index": i, "after": k, "ttl": "5m" | "1h" | None}``: the point follows the first ``k`` tool
    schemas, system blocks, or blocks of ``messages[i]``; no TTL means 5 minutes.
  * A call log whose records carry cache usage but not the cache points (``meta["layout"] == "from-usage"``:
    OpenTelemetry spans, Langfuse generations, proxy logs, ...): as Claude Code, a breakpoint at the end of the
    system/tools prefix and one where the call's logged cache read + cache write ends.
  * Any other log: no cache points (the log says nothing about its layout).

- ``Fidelity`` compares, call by call, the simulated ``as-logged`` cache-read and cache-write tokens and cost with
  the logged ones: the share of calls within 5 % on each, and the total cost difference.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from promptcache._pricing import ModelPrice

from ._models import TTL_SECONDS, CacheRules
from ._prepare import Request
from ._simulator import Checkpoint, RequestCost
from ._strategies import Strategy, StrategyUnavailable
from ._transcript import Usage

__all__ = ["AsLoggedStrategy", "Fidelity", "LoggedTotals", "logged_cost_usd", "TOLERANCE"]

#: A call's simulated figure "matches" the logged one when within this share of it (a 5 % tolerance).
TOLERANCE = 0.05


def logged_cost_usd(usage: Usage, price: ModelPrice) -> float:
    """The input-side cost of one logged call, USD: input, cache reads, 5-minute and 1-hour cache writes at
    ``price`` (USD per 1M tokens; its long-context tier where the call's prompt exceeds it). A 1-hour write on a
    model without a 1-hour price is billed at the 5-minute one."""
    price = price.at(usage.prompt_tokens)
    write_1h = usage.cache_write_1h_tokens
    write_5m = usage.cache_write_tokens - write_1h
    one_hour = price.write_1h if price.write_1h is not None else price.write_5m
    return (
        usage.input_tokens * price.input
        + usage.cache_read_tokens * price.read
        + write_5m * price.write_5m
        + write_1h * one_hour
    ) / 1_000_000


@dataclass
class LoggedTotals:
    """The log's own bill over the calls that carry usage. Tokens; USD (input side)."""

    requests: int = 0
    input_tokens: int = 0
    read_tokens: int = 0
    write_tokens: int = 0
    write_1h_tokens: int = 0
    cost_usd: float = 0.0
    output_cost_usd: float = 0.0

    def add(self, usage: Usage, price: ModelPrice) -> float:
        """Account one logged call; returns its input-side cost (USD)."""
        cost = logged_cost_usd(usage, price)
        self.requests += 1
        self.input_tokens += usage.input_tokens
        self.read_tokens += usage.cache_read_tokens
        self.write_tokens += usage.cache_write_tokens
        self.write_1h_tokens += usage.cache_write_1h_tokens
        self.cost_usd += cost
        self.output_cost_usd += usage.output_tokens * price.at(usage.prompt_tokens).output / 1_000_000
        return cost


def _within(simulated: float, logged: float) -> bool:
    return abs(simulated - logged) <= TOLERANCE * abs(logged) + 1e-9


@dataclass
class Fidelity:
    """Simulated ``as-logged`` against the log, per call and in total.

    Attributes:
        calls: compared calls. read_within / write_within / cost_within: calls within ``TOLERANCE`` of the
            logged cache-read tokens / cache-write tokens / cost.
        logged_usd / simulated_usd: input-side totals over the compared calls.
        per_call: ``[source, request number, model, logged read, simulated read, logged write, simulated write,
            logged USD, simulated USD]`` per call, in replay order.
    """

    calls: int = 0
    read_within: int = 0
    write_within: int = 0
    cost_within: int = 0
    logged_usd: float = 0.0
    simulated_usd: float = 0.0
    per_call: list[list[str | int | float]] = field(default_factory=list)

    def add(self, request: Request, model: str, logged_usd: float, simulated: RequestCost) -> None:
        """Compare one call (its ``request.usage`` must be set)."""
        usage = request.usage
        assert usage is not None
        self.calls += 1
        self.read_within += _within(simulated.read_tokens, usage.cache_read_tokens)
        self.write_within += _within(simulated.write_tokens, usage.cache_write_tokens)
        self.cost_within += _within(simulated.cost_usd, logged_usd)
        self.logged_usd += logged_usd
        self.simulated_usd += simulated.cost_usd
        self.per_call.append(
            [
                request.prepared.conversation.source or request.prepared.conversation.id,
                request.number,
                model,
                usage.cache_read_tokens,
                simulated.read_tokens,
                usage.cache_write_tokens,
                simulated.write_tokens,
                round(logged_usd, 8),
                round(simulated.cost_usd, 8),
            ]
        )

    @property
    def cost_difference(self) -> float | None:
        """(simulated - logged) / logged over all compared calls (``None`` without logged cost)."""
        return (self.simulated_usd - self.logged_usd) / self.logged_usd if self.logged_usd else None


class AsLoggedStrategy(Strategy):
    """``as-logged``: the cache layout the log itself used (see the module docstring)."""

    name = "as-logged"
    description = "the log's own cache points and TTLs (Claude Code: system/tools prefix + last message)"

    def __init__(self, rules: CacheRules, price: ModelPrice | None = None, ttl_s: float = 300.0) -> None:
        super().__init__(rules, price, ttl_s)
        self._ttl: dict[str, float] = {}  # conversation id -> TTL of its latest write

    def forget(self, conversation_id: str) -> None:
        """Drop what is kept for a finished conversation."""
        self._ttl.pop(conversation_id, None)

    def _clamp(self, ttl_s: float) -> float:
        offered = [t for t in self.rules.ttls_s if t <= ttl_s]
        return max(offered) if offered else min(self.rules.ttls_s)

    def place(self, request: Request) -> list[Checkpoint]:
        """The log's points for ``request``.

        Raises:
            StrategyUnavailable: the request holds more points than the model allows (a model forced with
                ``--model`` that allows fewer than the one the log was sent to): the layout cannot be replayed.
        """
        if not self.rules.supports_cache:
            return []
        conv = request.prepared.conversation
        points: list[Checkpoint] = []
        if conv.meta.get("format") == "claude-code" or conv.meta.get("layout") == "from-usage":
            points = self._claude_code(request)
        else:
            layout = conv.meta.get("cache_points")
            if isinstance(layout, list) and request.number < len(layout):
                points = self._listed(request, layout[request.number] or [])
        if len(points) > self.rules.max_points:
            raise StrategyUnavailable(
                f"the log's requests hold {len(points)} cache points; {self.rules.model_id} allows "
                f"{self.rules.max_points}"
            )
        return points

    def _claude_code(self, request: Request) -> list[Checkpoint]:
        prepared, cid = request.prepared, request.prepared.conversation.id
        usage = request.usage
        prefix_ttl = tail_ttl = self._ttl.get(cid, 300.0)
        if usage is not None and usage.cache_write_tokens:
            one_hour = usage.cache_write_1h_tokens
            prefix_ttl = 3600.0 if one_hour else 300.0
            tail_ttl = 3600.0 if one_hour and one_hour >= usage.cache_write_tokens else 300.0
            self._ttl[cid] = tail_ttl
        prefix_ttl, tail_ttl = self._clamp(prefix_ttl), self._clamp(tail_ttl)
        points: list[Checkpoint] = []
        prefix = prepared.hidden_end or prepared.system_end or prepared.tools_end
        levels = [prefix]
        if prepared.hidden_end:  # one breakpoint per cached level of the unlogged prefix (the longest kept)
            cum = prepared.cum
            levels = [b for b in range(prepared.tools_end + 1, prefix + 1) if cum[b] > cum[b - 1]]
            levels = levels[-max(1, self.rules.max_points - 1) :]
        for boundary in levels:
            if 0 < boundary < request.n_blocks:
                points.append(Checkpoint(boundary, max(prefix_ttl, tail_ttl), "system"))
        points.append(Checkpoint(_cached_extent(request, prefix), tail_ttl))
        return points

    def _listed(self, request: Request, entries: list[object]) -> list[Checkpoint]:
        points: dict[int, Checkpoint] = {}
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            boundary, fld = self._boundary(request, entry)
            if 0 < boundary <= request.n_blocks:
                ttl = TTL_SECONDS.get(str(entry.get("ttl") or "5m"), 300.0)
                points[boundary] = Checkpoint(boundary, self._clamp(ttl), fld)
        ordered = sorted(points.values(), key=lambda p: p.boundary)
        for i in range(len(ordered) - 2, -1, -1):  # keep TTLs non-increasing along the prompt
            if ordered[i].ttl_s < ordered[i + 1].ttl_s:
                ordered[i] = Checkpoint(ordered[i].boundary, ordered[i + 1].ttl_s, ordered[i].field)
        return ordered

    @staticmethod
    def _boundary(request: Request, entry: object) -> tuple[int, str]:
        """The block boundary of one logged cache point (0 when it cannot be placed)."""
        prepared = request.prepared
        if not isinstance(entry, dict):
            return 0, ""
        where, after = entry.get("where"), int(entry.get("after") or 0)
        if where == "tools":
            return min(after, prepared.tools_end), "tools"
        if where == "system":
            start = prepared.hidden_end or prepared.tools_end
            return min(start + after, prepared.system_end), "system"
        index = entry.get("index")
        if where != "message" or not isinstance(index, int) or not 0 <= index < request.cut:
            return 0, ""
        start = prepared.msg_end[index - 1] if index else prepared.system_end
        return min(start + after, prepared.msg_end[index]), "messages"


def _cached_extent(request: Request, prefix: int) -> int:
    """Where the call's last breakpoint sat: the block boundary after ``prefix`` nearest the tokens the log shows
    in the cache once the call was done (cache read + cache write), so a call whose tail was sent uncached (logged
    ``input_tokens`` beyond a few) is replayed with that tail uncached; the request's end when nothing is logged."""
    usage, cum, end = request.usage, request.prepared.cum, request.n_blocks
    if usage is None or not usage.input_tokens or usage.cache_read_tokens + usage.cache_write_tokens == 0:
        return end
    target = usage.cache_read_tokens + usage.cache_write_tokens
    at = bisect.bisect_left(cum, target, prefix + 1, end + 1)
    candidates = [b for b in (at - 1, at) if prefix < b <= end]
    return min(candidates, key=lambda b: (abs(cum[b] - target), -b)) if candidates else end

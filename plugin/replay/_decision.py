"""The decision a replay supports: keep the log's layout, switch placement, use the 1-hour TTL, or leave caching off.

``decide(result)`` compares the **current** layout (``as-logged`` where the log records usage, else ``none``: a
log without usage shows no caching) with every placement a user can install (``PLACEMENTS``), each also with the
1-hour TTL (``NAME@1h``, where the model offers it), and ``none``, all on the same requests (the logged ones when
the current layout is ``as-logged``). The cheapest wins:

- ``keep``: the current layout is the cheapest, or nothing beats it by more than the simulator's own measured
  error on this log (the fidelity figure: simulated ``as-logged`` against the bill). Where that error passes
  ``promptcache.replay._reliability.BILL_TOLERANCE`` (5%) the simulated rows are unreliable for the log: the
  decision keeps, claims no row cheapest and says why (``Decision.unreliable``). A Claude Code log always keeps
  (Claude Code places its own cache points; the user cannot change them) unless no caching at all is cheaper; its
  advice lines name what the user can change: idle gaps, model switches, compaction.
- ``switch``: another placement, at 5 minutes; ``set-ttl``: a placement with ``cache_ttl="1h"``;
- ``disable``: ``none`` is the cheapest (nothing cached pays at this spacing).

On an OpenAI log (the main model's family is ``openai``) every row reads the cache: OpenAI caches prompt prefixes
by itself, charges nothing for writing them and cannot be told not to, so there is no placement to switch to and
nothing to turn off. The decision is ``keep``, and its sentence compares the current cost with the no-cache
counterfactual (every prompt token at the input price, ``ReplayResult.no_cache_usd``) and names what changes the
cached share: a prompt whose front stays byte-identical, and ``prompt_cache_key``.

Savings per month (``rate_source``): the saving over the log, divided by the log's time span and multiplied by 30
days (``"log-span"``), or by ``monthly_requests / requests`` when the caller gives a monthly volume
(``"monthly-requests"``). When requests carry no timestamps the span itself is assumed (they are ``--gap-s``
apart): ``"assumed-gap"``, and the sentence says so and asks for ``--monthly-requests N``. A span under
``MIN_SPAN_S`` (an hour, the longest cache lifetime) supports no monthly figure: ``"span-too-short"``, the
saving is given over the log and the sentence asks for ``--monthly-requests N``. Where sizes were
estimated, the band is the token estimate's relative error (``ESTIMATE_ERROR``) times the share of estimated
requests, times the savings. Under the sentence, ``advice`` holds the Claude Code lines (``_advice``) and, where
the ``anchored-tail+response-cache`` row is cheaper than the recommended one, why it is not the recommendation
(``promptcache.replay._combined_note``). ``cause_rows`` prices each miss cause's fix with the same simulator
(``promptcache.replay._fixes``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from promptcache._types import JSONObject

from ._combined_note import combined_note
from ._fixes import cause_rows, one_model_saving, ttl_option
from ._layout_ttl import PLACEMENTS, same_ttl_placement
from ._monthly_rate import MIN_SPAN_S, MONTH_S, duration, month_factor
from ._one_model import ONE_MODEL
from ._openai_sentence import openai_sentence as _openai_sentence
from ._reliability import predicted_caveat, unreliable, unreliable_sentence
from ._result_rows import available as _available
from ._result_rows import cost as _cost
from ._result_rows import is_claude_code, is_openai
from ._variants import KEEP_ALIVE, ONE_HOUR

if TYPE_CHECKING:
    from ._engine import ReplayResult

__all__ = ["ESTIMATE_ERROR", "MIN_SPAN_S", "MONTH_S", "Decision", "cause_rows", "decide", "is_claude_code", "is_openai"]

#: Relative error of estimated prompt sizes, by calibration (bench/README.md, "Replay: token estimate"): the Claude
#: calibration's growth error on a session it was not fitted on (±7%); plain cl100k_base's largest shortfall
#: against Claude's billed counts on the same sessions (28%).
ESTIMATE_ERROR = {"claude": 0.07, "cl100k": 0.28}
_PLACEMENTS = PLACEMENTS
_HOW_TO = {
    "anchored-tail": "the default of CachePointChatBedrockConverse and BedrockCachePoints",
    "multi-point": 'CachePointChatBedrockConverse(strategy="multi-point")',
    "langchain-aws": "langchain-aws's BedrockPromptCachingMiddleware",
    "last-message": "one cache point at the end of each request (langchain-anthropic's middleware)",
}


@dataclass(frozen=True)
class Decision:
    """What to do, and what it saves (see the module docstring). USD; ``span_s`` seconds."""

    action: str  # keep | switch | set-ttl | disable
    strategy: str  # the recommended row: "as-logged", "none" or a placement
    ttl_s: float | None  # the recommended TTL (None: no caching)
    current: str  # "as-logged" or "none"
    current_usd: float
    recommended_usd: float
    savings_usd: float  # over the log
    monthly_savings_usd: float | None  # None: no time span and no monthly volume
    band_usd: float | None
    span_s: float
    basis: str  # how the month was extrapolated
    sentence: str
    advice: list[str] = field(default_factory=list)
    rate_source: str | None = None  # "log-span" | "assumed-gap" | "monthly-requests"; None: no monthly figure
    unreliable: str | None = None  # why the simulated rows cannot carry the decision (``_reliability``); None: they can

    def to_json(self) -> JSONObject:
        """The ``decision`` object of replay.json."""
        return {
            "action": self.action,
            "strategy": self.strategy,
            "ttl": None if self.ttl_s is None else ("1h" if self.ttl_s >= 3600 else "5m"),
            "current": self.current,
            "current_usd": round(self.current_usd, 6),
            "recommended_usd": round(self.recommended_usd, 6),
            "savings_usd": round(self.savings_usd, 6),
            "monthly_savings_usd": _round(self.monthly_savings_usd),
            "band_usd": _round(self.band_usd),
            "basis": self.basis,
            "rate_source": self.rate_source,
            "sentence": self.sentence,
            "advice": [*self.advice],
            "reliable": self.unreliable is None,
            "unreliable": self.unreliable,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def decide(result: ReplayResult) -> Decision | None:
    """The decision for ``result`` (module docstring); ``None`` when the run compared no placement."""
    placements = [n for n in _PLACEMENTS if _available(result, n) is not None]
    none = _available(result, "none")
    if not placements or none is None:
        return None
    as_logged = _available(result, "as-logged") if result.billed_mismatch() is None else None
    current = "as-logged" if as_logged is not None and as_logged.requests else "none"
    logged = current == "as-logged"
    # the rows are compared on the requests the current row covers: those with logged usage, or every request
    # where the as-logged row is predicted (no usage: the client's placement rules price every request)
    on_logged = logged and as_logged is not None and as_logged.logged_only
    candidates = [current] + [n for n in ("none", *placements) if n != current]
    candidates += [n + ONE_HOUR for n in [current, *placements] if _available(result, n + ONE_HOUR) is not None]
    costs = {}
    for n in candidates:
        row = _available(result, n)
        if row is not None:
            costs[n] = _cost(row, on_logged)
    current_usd = costs[current]
    tolerance = 1e-9 * max(current_usd, 1e-12)
    if logged and result.fidelity is not None and result.fidelity.cost_difference is not None:
        tolerance = max(tolerance, abs(result.fidelity.cost_difference) * current_usd)
    if logged and is_claude_code(result):
        costs = {n: c for n, c in costs.items() if n in (current, "none")}
    if is_openai(result):  # nothing to place and nothing to turn off: the current layout is the only choice
        costs = {current: current_usd}
    best = min(costs, key=lambda n: (costs[n], candidates.index(n) if n in candidates else 99))
    reason = unreliable(result) if logged else None
    if costs[best] >= current_usd - tolerance or reason is not None:
        best = current
    action, strategy, ttl = _action(result, best, current)
    requests = as_logged.requests if logged and as_logged is not None else result.requests
    factor, basis, rate_source = month_factor(result, requests)
    savings = current_usd - costs[best]
    monthly = savings * factor if factor is not None else None
    estimated = 1 - (result.logged_requests / result.requests if result.requests else 0.0)
    band = (
        abs(monthly) * ESTIMATE_ERROR["claude" if result.token_estimate.startswith("claude") else "cl100k"] * estimated
        if monthly is not None
        else None
    )
    decision = Decision(
        action,
        strategy,
        ttl,
        current,
        current_usd,
        costs[best],
        savings,
        monthly,
        band,
        result.span_s,
        basis,
        "",
        rate_source=rate_source,
        unreliable=reason,
    )
    sentence = _sentence(result, decision, costs, placements, logged) if reason is None else unreliable_sentence(reason)
    if result.model_source == "assumed":  # the decision rests on a price the log did not name
        sentence += f" (Priced as {result.model_id}: the log names no model; --model sets the one that served it.)"
    advice = _advice(result, decision, factor) if is_claude_code(result) else []
    caveat = predicted_caveat(result)
    advice = ([caveat] if caveat else []) + advice
    note = combined_note(result, decision, on_logged, factor) if decision.action != "disable" else None
    advice += [note] if note else []
    return Decision(**{**decision.__dict__, "sentence": sentence, "advice": advice})


def _action(result: ReplayResult, best: str, current: str) -> tuple[str, str, float | None]:
    """``(action, strategy, ttl_s)`` for the cheapest row ``best`` against the ``current`` one."""
    if best == current and is_openai(result):
        return "keep", current, None  # OpenAI's cache lives as long as OpenAI keeps it: no TTL to choose
    if current == "as-logged" and is_claude_code(result):
        return "keep", current, _layout_ttl(result)  # Claude Code places its own points: not the user's to change
    if best == current:
        return ("disable", "none", None) if current == "none" else ("keep", current, _layout_ttl(result))
    base = best.removesuffix(ONE_HOUR)
    if base == "none":
        return "disable", "none", None
    if best.endswith(ONE_HOUR):
        return "set-ttl", base, 3600.0
    return "switch", base, 300.0


def _layout_ttl(result: ReplayResult) -> float | None:
    """The TTL the log's own layout wrote most of its cache-write tokens with (the ``ttl`` a ``keep`` reports);
    comparisons with the layout use ``promptcache.replay._layout_ttl``, which tells a mixed layout apart."""
    row = result.strategies.get("as-logged")
    if row is None or not row.write_tokens:
        return None
    return 3600.0 if row.write_1h_tokens * 2 >= row.write_tokens else 300.0


#: Span (seconds) under which a monthly figure says, beside it, how little traffic it is extrapolated from: a day,
#: the shortest span that holds a whole daily cycle of traffic (working hours and idle nights); a shorter log's rate
#: is that of the hours it caught.
SHORT_SPAN_S = 86_400.0


def _short_span(d: Decision) -> str:
    """``", from 70 minutes of traffic"`` beside a monthly figure extrapolated from under ``SHORT_SPAN_S``."""
    if d.rate_source == "log-span" and 0 < d.span_s < SHORT_SPAN_S:  # an assumed span says so in its basis
        return f", from {duration(d.span_s)} of traffic"
    return ""


def _money(usd: float | None, band: float | None = None) -> str:
    if usd is None:
        return ""
    text = f"${usd:,.2f}"
    return text + (f" (±${band:,.2f}, token sizes estimated)" if band else "")


def _sentence(result: ReplayResult, d: Decision, costs: dict[str, float], placements: list[str], logged: bool) -> str:
    none_usd = costs.get("none") or 0.0

    def rel(usd: float) -> str:
        return f"{usd / none_usd:.1%} of no caching" if none_usd else f"${usd:,.4f}"

    short = _short_span(d)
    per_month = (
        f"saving {_money(d.monthly_savings_usd, d.band_usd)} per month{short}{',' if short else ''} {d.basis}"
        if d.monthly_savings_usd is not None
        else f"saving ${d.savings_usd:,.4f} over this log ({d.basis})"
    )
    if d.action == "switch":
        against = f" against {rel(d.current_usd)} for the log's own layout" if logged else ""
        tied = [n for n in placements if n != d.strategy and abs(costs.get(n, -1.0) - d.recommended_usd) <= 1e-9]
        same = f" ({', '.join(tied)} {'cost' if len(tied) > 1 else 'costs'} the same)" if tied else ""
        return (
            f"Switch to {d.strategy} ({_HOW_TO.get(d.strategy, d.strategy)}): it costs {rel(d.recommended_usd)}"
            f"{same}{against}, {per_month}."
        )
    if d.action == "set-ttl":
        now = f" against {rel(d.current_usd)} now" if logged else ""
        return f'Use the 1-hour TTL with {d.strategy} (cache_ttl="1h"): it costs {rel(d.recommended_usd)}{now}, {per_month}.'

    if is_openai(result):
        return _openai_sentence(result, d, logged)
    priced = [n for n in placements if n in costs]
    if d.action == "disable":
        off = min(priced, key=lambda n: (costs[n], placements.index(n))) if priced else None
        return _off_sentence(result, d, rel(costs[off]) if off else "", off, per_month)
    cheapest = min(placements, key=lambda n: (costs.get(n, float("inf")), placements.index(n)))
    if is_claude_code(result):
        none = result.strategies.get("none")
        base = none.logged_cost_usd if none is not None else 0.0
        bill = result.logged
        billed = f", {bill.cost_usd / base:.1%} as billed" if bill is not None and bill.cost_usd and base else ""
        return (
            f"Keep what you have: Claude Code places its own cache points ({rel(d.current_usd)} here as simulated"
            f"{billed}) and they are not yours to change; what you can change is how you work (below)."
        )
    if costs[cheapest] >= d.current_usd:
        return (
            f"Keep what you have: the log's own layout ({rel(d.current_usd)}) is the cheapest here; the next best, "
            f"{cheapest}, costs {rel(costs[cheapest])}."
        )
    error = abs((result.fidelity.cost_difference if result.fidelity is not None else None) or 0.0)
    return (
        f"Keep what you have: the log's own layout costs {rel(d.current_usd)}; {cheapest} ({rel(costs[cheapest])}) "
        f"is cheaper by less than the simulator's own error on this log (±{error:.1%}), so no change is shown to pay."
    )


def _off_sentence(result: ReplayResult, d: Decision, cheapest_rel: str, cheapest: str | None, per_month: str) -> str:
    if not result.rules.cachable:  # no field may carry a point: no entry is ever written, so no TTL to speak of
        return (
            f"{'Leave' if d.current == 'none' else 'Turn'} caching off: {result.model_id} takes no cache points (no "
            "field may carry one), so no placement caches anything here."
        )
    minimum = result.rules.min_tokens
    if result.largest_request_tokens < minimum:
        return (
            f"Leave caching off: nothing can be cached here: the largest request has "
            f"{result.largest_request_tokens:,} token{'' if result.largest_request_tokens == 1 else 's'}, below the "
            f"{minimum:,} tokens {result.model_id} needs before a cache point (the prefix up to a point must reach "
            "it). Caching pays on longer prompts (a long system prompt, many tools, long histories)."
        )
    if d.current != "none":
        return f"Turn caching off: the log's own layout costs more than no caching, {per_month}."
    hint = (
        "" if 3600.0 in result.rules.ttls_s else " or use a model that offers the 1-hour TTL (e.g. Claude Sonnet 4.5)"
    )
    kept = [(r.cost_usd, n.removesuffix(KEEP_ALIVE)) for n, r in result.variants.items() if n.endswith(KEEP_ALIVE)]
    kept = [(c, n) for c, n in kept if n in _PLACEMENTS]
    none = result.strategies.get("none")
    alive = ""
    if kept and none is not None and none.cost_usd and min(kept)[0] < none.cost_usd:
        usd, name = min(kept)
        alive = (
            f"; caching pays here only if something keeps the prefix warm: a keep-alive request of your own "
            f"before the TTL ends (the plugins send none) would bring {name} to {usd / none.cost_usd:.1%} of no "
            "caching (miss causes below)"
        )
    best = f" (the cheapest, {cheapest}, costs {cheapest_rel})" if cheapest else ""
    return (
        f"Leave caching off for such traffic{hint}: no placement beats no caching at this spacing{best}; the "
        f"prefixes are not reused before their cache entries expire{alive}."
    )


def _advice(result: ReplayResult, d: Decision, factor: float | None) -> list[str]:
    """Claude Code: the miss causes a user can act on, with their monthly cost."""
    causes = result.miss_causes.get(d.current) or result.miss_causes.get("as-logged") or {}
    scale = factor if factor is not None else 1.0
    assumed = d.rate_source == "assumed-gap"
    unit = ("per month at the assumed rate" if assumed else "per month") if factor is not None else "over this log"
    unit += _short_span(d) if factor is not None else ""
    lines = []

    def usd(value: float) -> str:  # cents per month; over a short log, as the table does
        return f"${value:,.2f}" if factor is not None else f"${value:,.4f}"

    expired = causes.get("ttl-expired")
    if expired is not None and expired.cost_usd > 0:
        longest = max(expired.gaps_s, default=0.0)
        option = ttl_option(result, d.current)
        pays = ""
        if option is not None:
            text, saved_usd = option[0], option[1] * scale
            pays = (
                f"; a {text} would save {usd(saved_usd)} {unit}"
                if saved_usd > 0
                else f"; a {text} would not pay here (it costs {usd(-saved_usd)} more {unit})"
            )
        lines.append(
            f"Idle gaps past the cache TTL (up to {longest / 60:.0f} min) re-wrote "
            f"{expired.cache_write_tokens:,} tokens: {usd(expired.cost_usd * scale)} {unit}{pays}."
        )
    switched = causes.get("model-switch")
    if switched is not None and switched.cost_usd > 0:
        saved = one_model_saving(result, d.current)
        priced = ""
        if saved is not None and d.current + ONE_MODEL not in result.variants:
            priced = (
                "; they are between conversations (another conversation's model cached the prefix), so one model "
                "per conversation would not avoid them"
            )
        elif saved is not None:
            verb = "would save" if saved >= 0 else "would cost"
            priced = f"; one model per conversation {verb} {usd(abs(saved) * scale)} {unit} (prices included)"
        lines.append(
            f"Model switches ({switched.events:,}) re-wrote {switched.cache_write_tokens:,} tokens: "
            f"{usd(switched.cost_usd * scale)} {unit}{priced}."
        )
    changed = causes.get("prefix-changed")
    if changed is not None and changed.cost_usd > 0:
        lines.append(
            f"Compaction and prefix changes ({changed.events:,}) re-wrote {changed.cache_write_tokens:,} tokens: "
            f"{usd(changed.cost_usd * scale)} {unit} (what they cost, not a saving: they are Claude Code's own "
            "changes, which nothing you control is known to recover)."
        )
    cheapest, row, ttl_words = same_ttl_placement(result)
    current = result.strategies.get(d.current)
    other_usd = _cost(row, current is not None and current.logged_only) if row is not None else 0.0
    claude_code_layout = d.current == "as-logged"  # not where that row is unavailable or not comparable
    if claude_code_layout and row is not None and d.current_usd > 0 and other_usd < d.current_usd * (1 - 0.0005):
        less = 1 - other_usd / d.current_usd
        error = abs((result.fidelity.cost_difference if result.fidelity is not None else None) or 0.0)
        within = f" (within the simulator's own error on this log, ±{error:.1%})" if less <= error else ""
        lines.append(
            f"For agents of your own, {cheapest} would cost {less:.1%} less than Claude Code's layout on this "
            f"traffic{ttl_words}{within}."
        )
    if factor is not None and lines:  # the basis, so runs over different spans compare
        lines.append(f"Monthly figures are {d.basis}.")
    elif d.rate_source == "span-too-short" and lines:
        lines.append(f"Figures are over this log: {d.basis}.")
    return lines

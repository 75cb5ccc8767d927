"""The replay's JSON document (``replay.json``).

Layout (``to_json``): ``{"model", "files", "conversations", "requests", "input_tokens", "output_tokens",
"model_source": "log" | "assumed" | "mixed" | "forced" (where each call's model came from: ``assumed``: the log
names none, every call priced as the default model), "assumed_model_requests", "gap_s", "span_s", "decision":
{"action", "strategy", "ttl", "current", "current_usd", "recommended_usd", "savings_usd", "monthly_savings_usd",
"band_usd", "basis", "rate_source": "log-span" | "assumed-gap" | "monthly-requests" | "span-too-short", "sentence", "advice"} |
null, "best_strategy", "no_cache_usd" / "no_cache_logged_usd" (every prompt token at the input price: the
no-cache counterfactual, over all requests / those with logged usage),
"miss_causes": {row: [{"cause", "cache_write_tokens", "uncached_tokens", "cost_usd", "recoverable_usd", "fix",
"requests", "longest_gap_s", "median_gap_s"}]}, "variants": {"NAME@1h" | "NAME+keep-alive" | "NAME+one-model": {...row..., "keepalive_calls"}},
"cache_rules": {...}, "prices_usd_per_mtok": {...}, "strategies": {name: {"description", "requests",
"model_calls", "input_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens", "cost_usd",
"output_cost_usd", "relative_to_none", "relative_to_no_cache", "requests_with_cache_read_share",
"unavailable"}}, "response_cache": {...},
"intention_cache": {"tool_calls", "answered_exact", "answered_similar", "wrong_answers", "right_answers",
"served_repeats", ...}, "models": {model: calls}, "token_sizes": {"logged_requests", "estimated_requests",
"estimate"}, "as_logged": null | {"logged_requests", "requests", "compared", "not_compared", "logged": {...the
log's bill...}, "fidelity": null | {"calls", "cache_read_within_5pct", "cache_write_within_5pct",
"cost_within_5pct", "logged_cost_usd", "simulated_cost_usd", "cost_difference", "per_call": [[source, request,
model, logged read, simulated read, logged write, simulated write, logged USD, simulated USD], ...]}, "versus":
{strategy: {"cost_on_logged_usd", "vs_logged", "vs_as_logged", "vs_langchain_aws"}}}, "as_logged_source": null |
"logged" | "predicted" | "mixed" (where the ``as-logged`` row's sizes and layout came from: the log's usage, or the
client's placement rules on estimated sizes), "output_tokens_note": null | why output counts are not exact (Claude
Code's streaming snapshot), "seconds"}`` (decision:
``promptcache.replay._decision``; causes: ``promptcache.replay._causes``; intention figures:
``promptcache.replay._intentions.IntentionStats``). Costs are USD over the log; ``cost_usd`` is the input side
(plain input + cache reads + cache writes), the part placement changes; output cost is listed separately.

Logged usage (one rule): every comparison with the log covers the requests that carry logged usage only.
``vs_logged`` (the table's "vs billed" column) is a row's cost on those requests over the log's billed cost;
``vs_as_logged`` compares two simulated costs on those requests. The ``as-logged`` row itself covers those requests
only. When ``--model`` forces a model other than the one(s) the log was billed for, the bill is not compared
(``compared`` false, ``not_compared`` says why; no fidelity, ``vs_logged`` null).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ._decision import cause_rows, decide
from ._engine import ReplayResult, StrategyTotals
from ._output_files import write_replacing
from ._result_rows import ranked_models

__all__ = ["to_json", "write_json"]


def _row_json(result: ReplayResult, row: StrategyTotals, rel: float | None) -> dict[str, Any]:
    no_cache = None if row.unavailable else result.no_cache_logged_usd if row.logged_only else result.no_cache_usd
    return {
        "description": row.description,
        "requests": row.requests,
        "model_calls": row.model_calls,
        "input_tokens": row.input_tokens,
        "cache_read_tokens": row.read_tokens,
        "cache_write_tokens": row.write_tokens,
        "cache_write_1h_tokens": row.write_1h_tokens,
        "cost_usd": round(row.cost_usd, 6),
        "output_cost_usd": round(row.output_cost_usd, 6),
        "relative_to_none": None if rel is None else round(rel, 6),
        "relative_to_no_cache": _ratio(row.cost_usd, no_cache) if no_cache is not None else None,
        "requests_with_cache_read_share": round(row.read_share, 6),
        "unavailable": row.unavailable,
    }


def to_json(result: ReplayResult) -> dict[str, Any]:
    """The result as a JSON-ready dict (see the module docstring)."""
    rules, price = result.rules, result.price
    strategies = {name: _row_json(result, row, result.relative(name)) for name, row in result.strategies.items()}
    none = result.strategies.get("none")
    variants = {}
    for name, row in result.variants.items():
        base = none.logged_cost_usd if none is not None and row.logged_only else none.cost_usd if none else 0.0
        variants[name] = {
            **_row_json(result, row, row.cost_usd / base if base else None),
            "keepalive_calls": row.keepalive_calls,
        }
    decision = decide(result)
    rc, it = result.response_cache, result.intention
    return {
        "model": result.model_id,
        "model_source": result.model_source,
        "assumed_model_requests": result.assumed_model_requests,
        # file names as the OS gave them may hold undecodable bytes (surrogate escapes): shown as \xNN
        "files": [f.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace") for f in result.files],
        "conversations": result.conversations,
        "requests": result.requests,
        "skipped_lines": result.skipped.count,
        "skipped_first": result.skipped.first,
        "skipped_per_file": dict(result.skipped.per_file),
        "skipped_types": dict(result.skipped.types),
        "skipped_calls_missing": result.skipped.calls_missing,
        "merged": result.merged.to_json(),
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "gap_s": result.gap_s,
        "span_s": round(result.span_s, 3),
        "decision": decision.to_json() if decision is not None else None,
        "best_strategy": decision.strategy if decision is not None else None,
        "miss_causes": {name: cause_rows(result, name) for name in result.miss_causes},
        "no_cache_usd": round(result.no_cache_usd, 6),
        "no_cache_logged_usd": round(result.no_cache_logged_usd, 6),
        "variants": variants,
        "cache_rules": {
            "min_tokens_per_cache_point": rules.min_tokens,
            "max_cache_points": rules.max_points,
            "ttls_s": list(rules.ttls_s),
            "cachable": sorted(rules.cachable),
            "lookback_blocks": rules.lookback_blocks,
        },
        "prices_usd_per_mtok": {
            "input": price.input,
            "output": price.output,
            "cache_write_5m": price.write_5m,
            "cache_write_1h": price.write_1h,
            "cache_read": price.read,
            "source": result.price_source,
        },
        "strategies": strategies,
        "response_cache": {
            "requests": rc.requests,
            "hits": rc.hits,
            "ttl_s": rc.ttl_s,
            "exact_repeats_any_distance": rc.repeats,
        },
        "intention_cache": {
            "tool_calls": it.tool_calls,
            "looked_up": it.looked_up,
            "answered": it.answered,
            "answered_exact": it.exact,
            "answered_similar": it.similar,
            "wrong_answers": it.wrong,
            "wrong_exact": it.wrong_exact,
            "wrong_similar": it.wrong_similar,
            "right_answers": it.right,
            "right_answers_stale": it.right_stale,
            "listed_results": it.listed_results,
            "served_repeats": it.served,
            "served_repeats_stale": it.served_stale,
            "stored": it.stored,
            "same_call_repeats": it.same_call_repeats,
            "same_call_repeats_changed": it.same_call_repeats_changed,
            "users": it.users,
            "memory": {
                "class": "IntentionMemory",
                "backend": "InMemoryIntentionBackend",
                "similarity": it.similarity,
                "threshold": it.threshold,
                "margin": it.margin,
                "ttl_s": it.ttl_s,
                "serve_repeats": True,
            },
        },
        "models": dict(ranked_models(result)),
        "token_sizes": {
            "logged_requests": result.logged_requests,
            "estimated_requests": result.requests - result.logged_requests,
            "estimate": result.token_estimate,
        },
        "as_logged": _as_logged_json(result),
        "as_logged_source": result.as_logged_source,
        "output_tokens_note": result.output_tokens_note,
        "late_conversations": result.late_conversations,
        "seconds": round(result.seconds, 3),
    }


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 6) if b else None


def _as_logged_json(result: ReplayResult) -> dict[str, Any] | None:
    logged, fid = result.logged, result.fidelity
    if logged is None:
        return None
    as_logged = result.strategies.get("as-logged")
    lc = result.strategies.get("langchain-aws")
    mismatch = result.billed_mismatch()
    versus = {
        name: {
            "cost_on_logged_usd": round(row.logged_cost_usd, 6),
            "vs_logged": None if mismatch else _ratio(row.logged_cost_usd, logged.cost_usd),
            "vs_as_logged": _ratio(row.logged_cost_usd, as_logged.logged_cost_usd) if as_logged else None,
            "vs_langchain_aws": _ratio(row.cost_usd, lc.cost_usd) if lc and not lc.unavailable else None,
        }
        for name, row in result.strategies.items()
        if not row.unavailable
    }
    return {
        "logged_requests": logged.requests,
        "requests": result.requests,
        "compared": mismatch is None,
        "not_compared": mismatch,
        "logged": {
            "requests": logged.requests,
            "input_tokens": logged.input_tokens,
            "cache_read_tokens": logged.read_tokens,
            "cache_write_tokens": logged.write_tokens,
            "cache_write_1h_tokens": logged.write_1h_tokens,
            "cost_usd": round(logged.cost_usd, 6),
            "output_cost_usd": round(logged.output_cost_usd, 6),
        },
        "fidelity": None
        if mismatch or fid is None  # no fidelity: the as-logged row is unavailable
        else {
            "calls": fid.calls,
            "cache_read_within_5pct": round(fid.read_within / fid.calls, 6),
            "cache_write_within_5pct": round(fid.write_within / fid.calls, 6),
            "cost_within_5pct": round(fid.cost_within / fid.calls, 6),
            "logged_cost_usd": round(fid.logged_usd, 6),
            "simulated_cost_usd": round(fid.simulated_usd, 6),
            "cost_difference": None if fid.cost_difference is None else round(fid.cost_difference, 6),
            "per_call": fid.per_call,
        },
        "versus": versus,
    }


def write_json(result: ReplayResult, path: str | Path) -> Path:
    """Write ``to_json(result)`` to ``path`` (parents created; a file or link already there is replaced, never
    followed: `promptcache.replay._output_files.write_replacing`). Returns the path."""
    data = orjson.dumps(to_json(result), option=orjson.OPT_INDENT_2) + b"\n"  # before anything is written
    return write_replacing(path, lambda tmp: tmp.write_bytes(data))

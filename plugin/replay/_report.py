"""Rendering a ``ReplayResult``: the terminal table (rich) and the JSON document.

JSON layout (``to_json``): ``{"model", "files", "conversations", "requests", "input_tokens", "output_tokens",
"gap_s", "cache_rules": {...}, "prices_usd_per_mtok": {...}, "strategies": {name: {"description", "requests",
"model_calls", "input_tokens", "cache_read_tokens", "cache_write_tokens", "cache_write_1h_tokens", "cost_usd",
"output_cost_usd", "relative_to_none", "requests_with_cache_read_share", "unavailable"}}, "best_strategy",
"response_cache": {...}, "intention_cache": {"tool_calls", "answered_exact", "answered_similar", "wrong_answers",
"right_answers", "served_repeats", ...}, "models": {model: calls}, "token_sizes": {"logged_requests",
"estimated_requests", "estimate"}, "as_logged": null | {"logged_requests", "requests", "compared", "not_compared",
"logged": {...the log's bill...}, "fidelity": null | {"calls", "cache_read_within_5pct", "cache_write_within_5pct",
"cost_within_5pct", "logged_cost_usd", "simulated_cost_usd", "cost_difference", "per_call": [[source, request,
model, logged read, simulated read, logged write, simulated write, logged USD, simulated USD], ...]}, "versus":
{strategy: {"cost_on_logged_usd", "vs_logged", "vs_as_logged", "vs_langchain_aws"}}}, "as_logged_source": null |
"logged" | "predicted" | "mixed" (where the ``as-logged`` row's sizes and layout came from: the log's usage, or the
client's placement rules on estimated sizes), "output_tokens_note": null | why output counts are not exact (Claude
Code's streaming snapshot), "seconds"}`` (intention
figures: ``promptcache.replay._intentions.IntentionStats``). Costs are USD; ``cost_usd`` is the input side (plain
input + cache reads + cache writes), the part placement changes; output cost is listed separately.

Logged usage (one rule): every comparison with the log covers the requests that carry logged usage only.
``vs_logged`` (the table's "vs billed" column) is a row's cost on those requests over the log's billed cost;
``vs_as_logged`` and the "costs N% less than the log's own layout" line compare two simulated costs on those
requests. The ``as-logged`` row itself covers those requests only. When ``--model`` forces a model other than the
one(s) the log was billed for, the bill is not compared (``compared`` false, ``not_compared`` says why; no
fidelity, ``vs_logged`` null).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from promptcache._errors import missing_extra

try:
    from rich.console import Console
    from rich.table import Table
except ImportError as exc:  # the optional dependency of this module
    raise missing_extra("replay", exc) from exc

from ._engine import ReplayResult, StrategyTotals

__all__ = ["render_table", "to_json", "write_json"]


def to_json(result: ReplayResult) -> dict[str, Any]:
    """The result as a JSON-ready dict (see the module docstring)."""
    rules, price = result.rules, result.price
    strategies = {}
    for name, row in result.strategies.items():
        rel = result.relative(name)
        strategies[name] = {
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
            "requests_with_cache_read_share": round(row.read_share, 6),
            "unavailable": row.unavailable,
        }
    rc, it = result.response_cache, result.intention
    return {
        "model": result.model_id,
        # file names as the OS gave them may hold undecodable bytes (surrogate escapes): shown as \xNN
        "files": [f.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace") for f in result.files],
        "conversations": result.conversations,
        "requests": result.requests,
        "input_tokens": result.input_tokens,
        "output_tokens": result.output_tokens,
        "gap_s": result.gap_s,
        "cache_rules": {
            "min_tokens_per_checkpoint": rules.min_tokens,
            "max_checkpoints": rules.max_points,
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
        "best_strategy": result.best(),
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
        "models": result.models,
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
    if logged is None or fid is None:
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
        if mismatch
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
    """Write ``to_json(result)`` to ``path`` (parents created). Returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(orjson.dumps(to_json(result), option=orjson.OPT_INDENT_2) + b"\n")
    return target


_HOW_TO = {
    "anchored-tail": "anchored-tail is what promptcache.integrations.bedrock.CachePointChatBedrockConverse and "
    'BedrockCachePoints place by default (strategy="anchored-tail").',
    "multi-point": 'Get multi-point with CachePointChatBedrockConverse(strategy="multi-point") or '
    'BedrockCachePoints(strategy="multi-point").',
    "langchain-aws": "langchain-aws is langchain-aws's own ChatBedrockConverse placement for cache_control.",
    "last-message": "last-message is one cache point at the end of each request (as langchain-anthropic's caching "
    "middleware).",
}


def _n(count: int, noun: str) -> str:
    """``"1 request"``, ``"2,454 requests"``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _placements(result: ReplayResult) -> dict[str, StrategyTotals]:
    return {
        n: r
        for n, r in result.strategies.items()
        if n in _HOW_TO and n != "anchored-tail+response-cache" and not r.unavailable
    }


def _cheapest_tie(result: ReplayResult) -> list[str]:
    """The placements the "Cheapest placement here" line names (ours first on a tie); empty when that line is not
    the one printed (nothing to compare, nothing cachable, or no placement beats no caching)."""
    none, placements = result.strategies.get("none"), _placements(result)
    if result.best() is None or none is None or not placements or not none.cost_usd:
        return []
    if result.largest_request_tokens < result.rules.min_tokens:
        return []
    cheapest = min(r.cost_usd for r in placements.values())
    if cheapest >= none.cost_usd * (1 - 1e-9):
        return []
    tied = [n for n, r in placements.items() if abs(r.cost_usd - cheapest) <= 1e-9 * max(1.0, cheapest)]
    return sorted(tied, key=lambda n: n != "anchored-tail")  # ours first when costs tie: what the wrapper does


def _print_advice(result: ReplayResult, best: str | None, console: Console) -> None:
    """One line: the cheapest placement and how to get it in an agent, or that caching does not pay here. The
    reference ``hindsight`` (it knows the future) is never counted, and the line says so when it is present."""
    none = result.strategies.get("none")
    placements = _placements(result)
    if best is None or none is None or not placements or not none.cost_usd:
        return  # nothing to compare (no strategies, or no input tokens at all)
    minimum = result.rules.min_tokens
    if result.largest_request_tokens < minimum:
        console.print(
            f"Nothing can be cached here: the largest request has {_n(result.largest_request_tokens, 'token')}"
            f", below the {minimum:,} tokens {result.model_id} needs before a cache point (the prefix up "
            "to a point must reach it). Caching pays on longer prompts (a long system prompt, many tools, "
            "long histories)."
        )
        return
    cheapest = min(r.cost_usd for r in placements.values())
    if cheapest >= none.cost_usd * (1 - 1e-9):
        name = min(placements, key=lambda n: (placements[n].cost_usd, n != "anchored-tail"))
        rel = result.relative(name)
        hint = (
            ""
            if 3600.0 in result.rules.ttls_s
            else " or use a model that offers the 1-hour TTL (e.g. Claude Sonnet 4.5)"
        )
        console.print(
            f"No placement beats no caching here (cheapest: {name}, {rel:.1%} of none): the prefixes "
            "that reach the minimum are not reused before their cache entries expire at this spacing. "
            f"Leave caching off for such traffic{hint}."
        )
        return
    tied = _cheapest_tie(result)
    names = " = ".join(f"[bold]{n}[/bold]" for n in tied) + (" (same cost)" if len(tied) > 1 else "")
    hindsight = result.strategies.get("hindsight")
    note = (
        " (hindsight, which knows each conversation's next request time, is a reference and is not counted)"
        if hindsight is not None and not hindsight.unavailable
        else ""
    )
    console.print(f"Cheapest placement here: {names}{note}. {_HOW_TO[tied[0]]}")


def _print_sizes_and_fidelity(result: ReplayResult, console: Console) -> None:
    """Where the token sizes come from, the fidelity figure, and by how much the default strategy wins."""
    estimated = result.requests - result.logged_requests
    calibration = (
        "calibrated for Claude over cl100k_base" if result.token_estimate.startswith("claude") else "cl100k_base"
    )
    if not result.logged_requests:
        console.print(f"Token sizes: estimating ({calibration}); the log records no usage.")
    elif estimated:
        console.print(
            f"Token sizes: logged usage for {_n(result.logged_requests, 'request')}, estimating ({calibration}) "
            f"for {_n(estimated, 'request')}."
        )
    else:
        every = "the one request" if result.requests == 1 else f"all {_n(result.requests, 'request')}"
        console.print(f"Token sizes: from the logged usage of {every}.")
    if result.late_conversations:
        console.print(
            f"{_n(result.late_conversations, 'conversation')} started before requests already replayed (the input "
            "is not in time order across files or lines) and replayed after them."
        )
    if len(result.models) > 1:
        console.print("Models (calls): " + ", ".join(f"{m} ({n:,})" for m, n in result.models.items()) + ".")
    fid, logged = result.fidelity, result.logged
    mismatch = result.billed_mismatch()
    if logged is not None:
        console.print(f"as logged: {_logged_share(result, mismatch)}")
    if fid is not None and logged is not None and fid.cost_difference is not None and mismatch is None:
        console.print(
            f"Fidelity: as-logged simulated ${fid.simulated_usd:,.4f} vs logged ${fid.logged_usd:,.4f} "
            f"({fid.cost_difference:+.2%}); of {_n(fid.calls, 'call')}, {fid.read_within / fid.calls:.1%} within 5% "
            f"on cache-read tokens, {fid.write_within / fid.calls:.1%} on cache-write tokens (per call in replay.json)."
        )
    ours = result.strategies.get("anchored-tail")
    if ours is None or ours.unavailable:
        return
    tie = _cheapest_tie(result)
    for other in ("langchain-aws", "as-logged"):
        row = result.strategies.get(other)
        if row is None or row.unavailable or not row.cost_usd:
            continue
        if other == "as-logged":  # like with like: both simulated, on the requests that carry logged usage
            mine, theirs = ours.logged_cost_usd, row.cost_usd
            label = "the log's own layout (as-logged), both simulated"
            if row.requests < ours.requests:
                label += f" on the {_n(row.requests, 'logged request')}"
        else:
            mine, theirs, label = ours.cost_usd, row.cost_usd, other
        saved = 1 - mine / theirs
        if saved > 1e-9:
            console.print(f"anchored-tail costs {saved:.1%} less than {label} (${theirs - mine:,.4f}).")
        elif saved < -1e-9:
            console.print(f"anchored-tail costs {-saved:.1%} more than {label}.")
        elif not {"anchored-tail", other} <= set(tie):  # a tie the "Cheapest placement" line already names
            console.print(f"anchored-tail costs the same as {label}.")


def _logged_share(result: ReplayResult, mismatch: str | None) -> str:
    """The "as logged:" line: how many requests carry logged usage, and what the comparison with the bill covers."""
    logged = result.logged
    assert logged is not None
    if mismatch is not None:
        return f"not compared, {mismatch} (the as-logged row is simulated for the forced model)."
    if logged.requests < result.requests:
        return (
            f"{logged.requests:,} of {_n(result.requests, 'request')} carry logged usage; the billed row, "
            "'vs billed', the fidelity and the as-logged row cover those only."
        )
    if result.requests == 1:
        return "the one request carries logged usage."
    return f"all {_n(result.requests, 'request')} carry logged usage."


def _tok(n: int) -> str:
    return f"{n:,}"


def render_table(result: ReplayResult, console: Console | None = None) -> Table:
    """Print the comparison table (and the repeat counts) to ``console`` (stdout by default); returns the table."""
    console = console or Console(width=max(Console().width, 120))
    table = Table(
        title=f"promptcache replay — {result.model_id}: {_n(result.conversations, 'conversation')}, "
        f"{_n(result.requests, 'request')}, {_n(result.input_tokens, 'input token')}"
    )
    logged = result.logged if result.billed_mismatch() is None else None
    headers = ["uncached input", "cache read", "cache write", "USD (input side)", "vs none"]
    if logged is not None:
        headers.append("vs billed")
    table.add_column("strategy", no_wrap=True)
    for header in (*headers, "requests w/ read"):
        table.add_column(header, justify="right")
    best = result.best()
    for name, row in result.strategies.items():
        if row.unavailable:
            table.add_row(name, *["—"] * len(headers), "unavailable")
            continue
        rel = result.relative(name)
        label = f"[bold]{name}[/bold]" if name == best else name
        cells = [
            _tok(row.input_tokens),
            _tok(row.read_tokens),
            _tok(row.write_tokens),
            f"{row.cost_usd:,.4f}",
            "—" if rel is None else f"{rel:.1%}",
        ]
        if logged is not None:
            cells.append(f"{row.logged_cost_usd / logged.cost_usd:.1%}" if logged.cost_usd else "—")
        table.add_row(label, *cells, f"{row.read_share:.1%}")
    if logged is not None:
        none = result.strategies.get("none")
        base = none.logged_cost_usd if none is not None else 0.0  # none on the same (logged) requests
        table.add_row(
            "[italic]as logged (billed)[/italic]",
            _tok(logged.input_tokens),
            _tok(logged.read_tokens),
            _tok(logged.write_tokens),
            f"{logged.cost_usd:,.4f}",
            f"{logged.cost_usd / base:.1%}" if base else "—",
            "100.0%",
            "—",
        )
    console.print(table)
    _print_sizes_and_fidelity(result, console)
    billed = (
        " 'vs billed' is the row's cost on the requests with logged usage relative to the log's billed cost "
        "(row 'as logged (billed)')."
        if logged is not None
        else ""
    )
    console.print(
        "Tokens: uncached input is billed at the input price, cache reads and writes at the model's cache "
        f"prices; USD is the input side only; 'vs none' is the cost relative to no caching.{billed}"
    )
    _print_advice(result, best, console)
    rc, it = result.response_cache, result.intention
    console.print(
        f"ResponseCache: {rc.hits:,} of {_n(rc.requests, 'request')} answered (exact repeat within "
        f"{rc.ttl_s:g} s; {_n(rc.repeats, 'repeat')} at any distance)."
    )
    console.print(
        f"Intention cache (IntentionMemory in memory, threshold {it.threshold:g}, margin {it.margin:g}, "
        f"TTL {it.ttl_s:g} s), of {_n(it.tool_calls, 'tool call')}: retrieve_memory answered {it.answered:,} "
        f"({it.exact:,} exact, {it.similar:,} similar), {it.right:,} listing the call's own result "
        f"({it.right_stale:,} of them changed since) and {it.wrong:,} only other calls'; "
        f"serve_repeats answered {it.served:,} without running the tool ({it.served_stale:,} with a result "
        f"that changed since). {_n(it.same_call_repeats, 'call')} "
        f"{'repeats' if it.same_call_repeats == 1 else 'repeat'} an earlier successful call of the "
        f"same user (same tool and arguments, any intention, at any distance; "
        f"{it.same_call_repeats_changed:,} of them with a changed result)."
    )
    for name, row in result.strategies.items():
        if row.unavailable:
            console.print(f"[yellow]{name}: {row.unavailable}[/yellow]")
    spacing = (
        f" Requests {result.gap_s:g} s apart where no timestamps are recorded "
        f"({_n(result.untimed_requests, 'request')})."
        if result.untimed_requests
        else " Requests spaced by their recorded timestamps."
    )
    console.print(
        f"Output tokens ({result.output_tokens:,}) cost the same under every placement: "
        f"${result.strategies['none'].output_cost_usd:,.4f}.{spacing}"
    )
    return table

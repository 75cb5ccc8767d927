"""Rendering a ``ReplayResult`` in the terminal (rich): the decision first, the table it follows from, why the
cache missed, then the details.

1. **The decision** (``promptcache.replay._decision``): one sentence (keep / switch / use the 1-hour TTL / leave
   caching off, with the monthly saving), and for Claude Code logs the miss causes the user can act on.
2. **The table**: one row per strategy. The ``anchored-tail+response-cache`` row is shown only where the
   ResponseCache answered something and could sit in front of the calls (not on a Claude Code log), and the
   cheapest ``@1h`` variant where the model offers the 1-hour TTL.
3. **Why the cache missed** (``promptcache.replay._causes``), for the current layout and the recommended one: each
   cause's tokens, dollars, the fix and what the simulator says it recovers.
4. Token sizes, fidelity, the comparison lines, and (not on Claude Code logs) the ResponseCache and intention-cache
   counts.

The JSON document is ``promptcache.replay._report_json`` (``to_json`` and ``write_json`` are re-exported here).
"""

from __future__ import annotations

from promptcache._errors import missing_extra

try:
    from rich.console import Console
    from rich.markup import escape  # user and log text (model ids, paths) is not markup
    from rich.table import Table
except ImportError as exc:  # the optional dependency of this module
    raise missing_extra("replay", exc) from exc

from ._decision import Decision, cause_rows, decide, is_claude_code, is_openai
from ._engine import ReplayResult
from ._prediction import predicted_note
from ._report_json import to_json, write_json
from ._result_rows import cause_names, shown_rows, versus_base, versus_name

__all__ = ["render_table", "to_json", "write_json"]


def _n(count: int, noun: str) -> str:
    """``"1 request"``, ``"2,454 requests"``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _tok(n: int) -> str:
    return f"{n:,}"


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
        console.print("Models (calls): " + ", ".join(f"{escape(m)} ({n:,})" for m, n in result.models.items()) + ".")
    fid, logged = result.fidelity, result.logged
    mismatch = result.billed_mismatch()
    if logged is not None:
        console.print(f"as logged: {escape(_logged_share(result, mismatch))}")
    elif (note := predicted_note(result)) is not None:
        console.print(escape(note))
    if fid is not None and logged is not None and fid.cost_difference is not None and mismatch is None:
        console.print(
            f"Fidelity: as-logged simulated ${fid.simulated_usd:,.4f} vs logged ${fid.logged_usd:,.4f} "
            f"({fid.cost_difference:+.2%}); of {_n(fid.calls, 'call')}, {fid.read_within / fid.calls:.1%} within 5% "
            f"on cache-read tokens, {fid.write_within / fid.calls:.1%} on cache-write tokens (per call in replay.json)."
        )
    ours = result.strategies.get("anchored-tail")
    if ours is None or ours.unavailable or is_openai(result):  # OpenAI ignores cache points: every row is the same
        return
    for other in ("langchain-aws", "as-logged"):
        row = result.strategies.get(other)
        if row is None or row.unavailable or not row.cost_usd:
            continue
        if other == "as-logged":  # like with like: both simulated, on the requests the as-logged row covers
            mine, theirs = (ours.logged_cost_usd if row.logged_only else ours.cost_usd), row.cost_usd
            label = "the log's own layout (as-logged), both simulated"
            if row.requests < ours.requests:
                label += f" on the {_n(row.requests, 'logged request')}"
        else:
            mine, theirs, label = ours.cost_usd, row.cost_usd, other
        saved = 1 - mine / theirs
        if f"{abs(saved):.1%}" == "0.0%":  # a difference the line would print as 0.0% is none
            console.print(f"anchored-tail costs the same as {label}.")
        elif saved > 0:
            console.print(f"anchored-tail costs {saved:.1%} less than {label} (${theirs - mine:,.4f}).")
        else:
            console.print(f"anchored-tail costs {-saved:.1%} more than {label}.")


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


def _print_decision(decision: Decision | None, result: ReplayResult, console: Console) -> None:
    if decision is None:
        console.print(
            "No recommendation: the run compared no placement (add --strategy anchored-tail or run without "
            "--strategy to compare them all)."
        )
        return
    console.print(f"[bold]{escape(decision.sentence)}[/bold]")
    for line in decision.advice:
        console.print(f"  - {escape(line)}")


def _print_causes(result: ReplayResult, decision: Decision | None, console: Console) -> None:
    """The miss-cause table of the current layout and of the recommended row (module docstring, point 3)."""
    names = cause_names(result, decision)
    if not names:
        return
    table = Table(title="Why the cache missed: cache-write and uncached tokens by cause (USD over this log)")
    for header in ("strategy", "cause", "cache write", "uncached", "USD", "fix", "recovers USD"):
        table.add_column(header, justify="left" if header in ("strategy", "cause", "fix") else "right")
    for name in names:
        for row in cause_rows(result, name):
            cause = row["cause"]
            if row["median_gap_s"] is not None:
                cause += f" (median gap {row['median_gap_s']:,.0f} s)"
            saved = row["recoverable_usd"]
            table.add_row(
                name,
                escape(cause),
                _tok(row["cache_write_tokens"]),
                _tok(row["uncached_tokens"]),
                f"{row['cost_usd']:,.4f}",
                escape(row["fix"] or "—"),
                _recovers(saved, row["fix"]),
            )
    console.print(table)


def _recovers(saved: float | None, fix: str | None) -> str:
    """The "recovers USD" cell: a fix without a price says so."""
    if saved is None:
        return "not priced" if fix and not fix.startswith("see ") else "—"
    return f"{saved:,.4f}" if saved >= 0 else f"{saved:,.4f} (costs more)"


def render_table(result: ReplayResult, console: Console | None = None) -> Table:
    """Print the report (module docstring) to ``console`` (stdout by default); returns the strategy table."""
    console = console or Console(width=max(Console().width, 120), emoji=False)
    decision = decide(result)
    _print_decision(decision, result, console)
    table = Table(
        title=f"promptcache replay — {escape(result.model_id)}: {_n(result.conversations, 'conversation')}, "
        f"{_n(result.requests, 'request')}, {_n(result.input_tokens, 'input token')}"
    )
    logged = result.logged if result.billed_mismatch() is None else None
    openai = is_openai(result)
    headers = [
        "uncached input",
        "cache read",
        "cache write",
        "USD (input side)",
        f"vs {versus_name(result)}",
    ]
    if logged is not None:
        headers.append("vs billed")
    table.add_column("strategy", no_wrap=True)
    for header in (*headers, "requests w/ read"):
        table.add_column(header, justify="right")
    best = decision.strategy if decision is not None else None
    none = result.strategies.get("none")
    for name, row in shown_rows(result).items():
        if row.unavailable:
            table.add_row(name, *["—"] * len(headers), "unavailable")
            continue
        base_usd = versus_base(result, row)
        rel = row.cost_usd / base_usd if base_usd else None
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
        base = result.no_cache_logged_usd if openai else none.logged_cost_usd if none is not None else 0.0
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
    _print_causes(result, decision, console)
    _print_sizes_and_fidelity(result, console)
    billed = (
        " 'vs billed' is the row's cost on the requests with logged usage relative to the log's billed cost "
        "(row 'as logged (billed)')."
        if logged is not None
        else ""
    )
    versus = (
        "'vs no cache' is the cost relative to every prompt token billed at the input price: a counterfactual, "
        "since OpenAI caches prompt prefixes by itself (the none row reads the cache too, and every row is the "
        "same: OpenAI ignores cache points)"
        if openai
        else "'vs none' is the cost relative to no caching"
    )
    console.print(
        "Tokens: uncached input is billed at the input price, cache reads and writes at the model's cache "
        f"prices; USD is the input side only; {versus}.{billed}"
    )
    for name, row in result.strategies.items():
        if row.unavailable:
            console.print(f"[yellow]{name}: {escape(row.unavailable)}[/yellow]")
    if not is_claude_code(result):
        _print_repeats(result, console)
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


def _print_repeats(result: ReplayResult, console: Console) -> None:
    """The ResponseCache and intention-cache counts (they need the agent's own calls: not on a Claude Code log)."""
    rc, it = result.response_cache, result.intention
    console.print(
        f"ResponseCache: {rc.hits:,} of {_n(rc.requests, 'request')} answered (exact repeat within "
        f"{rc.ttl_s:g} s; {_n(rc.repeats, 'repeat')} at any distance)."
    )
    repeat = "repeats" if it.same_call_repeats == 1 else "repeat"
    console.print(
        f"Intention cache: would have answered {_n(it.right, 'call')} with their own result (retrieve_memory) and "
        f"served {it.served:,} without running the tool (serve_repeats); {_n(it.same_call_repeats, 'call')} "
        f"{repeat} an earlier successful call of the same user ({it.same_call_repeats_changed:,} with a changed "
        "result). In detail "
        f"(IntentionMemory in memory, threshold {it.threshold:g}, margin {it.margin:g}, TTL {it.ttl_s:g} s), of "
        f"{_n(it.tool_calls, 'tool call')}: retrieve_memory answered {it.answered:,} ({it.exact:,} exact, "
        f"{it.similar:,} similar), {it.right:,} listing the call's own result ({it.right_stale:,} of them changed "
        f"since) and {it.wrong:,} only other calls'; serve_repeats answered {it.served:,} ({it.served_stale:,} with "
        "a result that changed since); a repeat has the same tool and arguments, under any intention, at any "
        "distance."
    )

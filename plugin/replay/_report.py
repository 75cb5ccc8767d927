"""Rendering a ``ReplayResult`` in the terminal (rich): the decision first, the table it follows from, why the
cache missed, then the details.

1. **The decision** (``promptcache.replay._decision``): one sentence (keep / switch / use the 1-hour TTL / leave
   caching off, with the monthly saving), and for Claude Code logs the miss causes the user can act on.
2. **The table**: one row per strategy. The ``anchored-tail+response-cache`` row is shown only where the
   ResponseCache answered something and could sit in front of the calls (not on a Claude Code log), and the
   cheapest ``@1h`` variant where the model offers the 1-hour TTL (and ``anchored-tail@1h``, which the layout
   is compared with, where the log's own layout wrote 1-hour entries, and the variant a ``ttl-expired`` fix prices,
   e.g. ``as-logged@1h``: ``_result_rows.shown_rows``).
3. **Why the cache missed** (``promptcache.replay._causes``), for the current layout and the recommended one: each
   cause's tokens, dollars, the fix and what the simulator says it recovers.
4. Token sizes, fidelity, the comparison lines, and (not on Claude Code logs) the ResponseCache and intention-cache
   counts.

The JSON document is ``promptcache.replay._report_json`` (``to_json`` and ``write_json`` are re-exported here).
"""

from __future__ import annotations

from typing import Any

from promptcache._errors import missing_extra

try:
    from rich import box
    from rich.console import Console
    from rich.markup import escape  # user and log text (model ids, paths) is not markup
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text
except ImportError as exc:  # the optional dependency of this module
    raise missing_extra("replay", exc) from exc

from ._decision import Decision, cause_rows, decide, is_claude_code, is_openai
from ._engine import ReplayResult
from ._layout_ttl import mixed_ttl, mixed_words, uniform_ttl
from ._prediction import predicted_note
from ._report_json import to_json, write_json
from ._report_terminal import intention_paragraph, terminal_console
from ._result_rows import cause_names, models_label, ranked_models, shown_rows, versus_base, versus_name
from ._totals import StrategyTotals

__all__ = ["render_table", "to_json", "write_json"]


def _n(count: int, noun: str) -> str:
    """``"1 request"``, ``"2,454 requests"``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _tok(n: int) -> str:
    return f"{n:,}"


def _short(n: int) -> str:
    """A token count in at most 6 characters for a narrow terminal: ``"9,999"``, ``"967k"``, ``"32.9M"``."""
    if n < 10_000:
        return f"{n:,}"
    if n < 999_500:
        return f"{n / 1000:.0f}k"
    return f"{n / 1_000_000:.1f}M"


#: Terminal width (columns) from which the strategy table shows exact token counts with its borders; narrower, it
#: drops the vertical borders and shortens counts (``_short``) so its nine columns fit 80 columns unfolded.
WIDE = 120
_SHORT_HEADERS = {
    "uncached input": "uncached",
    "cache read": "read",
    "cache write": "write",
    "of which 1h": "1h",
    "USD (input side)": "USD",
    "requests w/ read": "w/read",
}
_NARROW: dict[str, Any] = {"box": box.SIMPLE_HEAD, "padding": (0, 0), "show_edge": False}


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
        models = ranked_models(result)
        console.print("Models (calls): " + ", ".join(f"{escape(m)} ({n:,})" for m, n in models) + ".")
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
        if other != "as-logged":
            console.print(f"anchored-tail {_versus(ours.cost_usd, row.cost_usd, other)}.")
            continue
        # like with like: both simulated, on the requests the as-logged row covers, and at the TTL the log wrote
        # with where it wrote one (a TTL gain is not placement); a log that mixes TTLs is compared at both
        on = f" on the {_n(row.requests, 'logged request')}" if row.requests < ours.requests else ""
        long = result.variants.get("anchored-tail@1h")
        long = None if long is None or long.unavailable else long

        def mine(r: StrategyTotals) -> float:
            return r.logged_cost_usd if row.logged_only else r.cost_usd

        label = "the log's own layout (as-logged)"
        split = mixed_ttl(result)
        if split is not None and long is not None:
            console.print(
                f"anchored-tail at the 5-minute TTL {_versus(mine(ours), row.cost_usd, label)}, at the 1-hour TTL "
                f"{_versus(mine(long), row.cost_usd, '')}, both simulated{on}; {mixed_words(split)}."
            )
        elif uniform_ttl(result) == 3600.0 and long is not None:
            label += f", both simulated at the log's 1-hour TTL{on}"
            console.print(f"anchored-tail {_versus(mine(long), row.cost_usd, label)}.")
        else:
            console.print(f"anchored-tail {_versus(mine(ours), row.cost_usd, label + ', both simulated' + on)}.")


def _versus(mine: float, theirs: float, label: str) -> str:
    """``"costs the same as LABEL"``, ``"costs 7.5% less than LABEL ($1.3215)"`` or ``"costs 5.4% more than
    LABEL"``: ``mine`` against ``theirs``, USD (a difference that would print as 0.0% is none); without a label,
    ``"the same"``, ``"7.5% less ($1.3215)"``, ``"5.4% more"``."""
    saved = 1 - mine / theirs
    if f"{abs(saved):.1%}" == "0.0%":
        return f"costs the same as {label}" if label else "the same"
    if saved > 0:
        less = f"{saved:.1%} less"
        return f"costs {less} than {label} (${theirs - mine:,.4f})" if label else f"{less} (${theirs - mine:,.4f})"
    return f"costs {-saved:.1%} more than {label}" if label else f"{-saved:.1%} more"


def _logged_share(result: ReplayResult, mismatch: str | None) -> str:
    """The "as logged:" line: how many requests carry logged usage, and what the comparison with the bill covers."""
    logged = result.logged
    assert logged is not None
    if mismatch is not None:
        row = result.strategies.get("as-logged")
        if row is not None and row.unavailable:
            return f"not compared, {mismatch}."
        return f"not compared, {mismatch} (the as-logged row is simulated for the forced model)."
    if logged.requests < result.requests:
        share = (
            f"{logged.requests:,} of {_n(result.requests, 'request')} carry logged usage; the billed row, "
            "'vs billed', the fidelity and the as-logged row cover those only."
        )
    elif result.requests == 1:
        share = "the one request carries logged usage."
    else:
        share = f"all {_n(result.requests, 'request')} carry logged usage."
    lost = result.skipped.calls_missing
    if lost:  # calls whose every record is a broken line: not among the requests, their usage not in the bill
        share += (
            f" {_n(lost, 'more call')} {'is' if lost == 1 else 'are'} not in the replay: every record of "
            f"{'it' if lost == 1 else 'theirs'} is a broken line (skipped), so {'its' if lost == 1 else 'their'} "
            "usage is missing from every row, the billed one included."
        )
    return share


def _print_decision(decision: Decision | None, result: ReplayResult, console: Console) -> None:
    if decision is None:
        console.print(
            "No recommendation: the run compared no placement (add --strategy anchored-tail or run without "
            "--strategy to compare them all)."
        )
        return
    console.print(f"[bold]{escape(decision.sentence)}[/bold]")
    for line in decision.advice:  # wrapped under their own indent; log text is not markup
        console.print(Padding(Text(f"- {line}"), (0, 0, 0, 2)))


def _print_causes(result: ReplayResult, decision: Decision | None, console: Console) -> None:
    """The miss-cause table of the current layout and of the recommended row (module docstring, point 3), then
    each cause's fix as a numbered line (a fix is a sentence: in a column it would wrap into a narrow tower)."""
    names = cause_names(result, decision)
    if not names:
        return
    narrow = console.width < WIDE
    table = Table(
        title="Why the cache missed: cache-write and uncached tokens by cause (USD over this log)",
        **_NARROW if narrow else {},
    )
    for header in ("strategy", "cause", "cache write", "uncached", "USD", "fix", "recovers USD"):
        table.add_column(header, justify="left" if header in ("strategy", "cause") else "right")
    fixes: list[str] = []
    for name in names:
        for row in cause_rows(result, name):
            cause = row["cause"]
            if row["median_gap_s"] is not None:
                cause += f" (median gap {row['median_gap_s']:,.0f} s)"
            saved = row["recoverable_usd"]
            fix = row["fix"]
            if fix and fix not in fixes:
                fixes.append(fix)
            table.add_row(
                name,
                escape(cause),
                _tok(row["cache_write_tokens"]),
                _tok(row["uncached_tokens"]),
                f"{row['cost_usd']:,.4f}",
                Text(f"[{fixes.index(fix) + 1}]") if fix else "—",
                _recovers(saved, fix),
            )
    console.print(table)
    for i, fix in enumerate(fixes, 1):
        console.print(Padding(Text(f"[{i}] {fix}"), (0, 0, 0, 2)))


def _recovers(saved: float | None, fix: str | None) -> str:
    """The "recovers USD" cell: a fix without a price says so."""
    if saved is None:  # docs/replay.md: a fix the simulator does not replay shows "not priced"
        return "—" if fix and fix.startswith("see ") else "not priced"
    return f"{saved:,.4f}" if saved >= 0 else f"{saved:,.4f} (costs more)"


def render_table(result: ReplayResult, console: Console | None = None) -> Table:
    """Print the report (module docstring) to ``console`` (stdout by default); returns the strategy table."""
    console = console or terminal_console()
    decision = decide(result)
    _print_decision(decision, result, console)
    narrow = console.width < WIDE
    table = Table(
        title=f"promptcache replay — {escape(models_label(result))}: {_n(result.conversations, 'conversation')}, "
        f"{_n(result.requests, 'request')}, {_n(result.input_tokens, 'input token')}",
        **_NARROW if narrow else {},
    )
    tok = _short if narrow else _tok
    logged = result.logged if result.billed_mismatch() is None else None
    openai = is_openai(result)
    rows = shown_rows(result, decision)
    split = any(r.write_1h_tokens for r in rows.values()) or (logged is not None and logged.write_1h_tokens > 0)
    headers = [
        "uncached input",
        "cache read",
        "cache write",
        *(["of which 1h"] if split else []),
        "USD (input side)",
        f"vs {versus_name(result)}",
    ]
    if logged is not None:
        headers.append("vs billed")
    table.add_column("strategy", no_wrap=True)
    for header in (*headers, "requests w/ read"):
        table.add_column(_SHORT_HEADERS.get(header, header) if narrow else header, justify="right", no_wrap=narrow)
    best = decision.strategy if decision is not None else None
    none = result.strategies.get("none")
    for name, row in rows.items():
        if row.unavailable:
            table.add_row(name, *["—"] * len(headers), "unavailable")
            continue
        base_usd = versus_base(result, row)
        rel = row.cost_usd / base_usd if base_usd else None
        label = f"[bold]{name}[/bold]" if name == best else name
        cells = [
            tok(row.input_tokens),
            tok(row.read_tokens),
            tok(row.write_tokens),
            *([tok(row.write_1h_tokens)] if split else []),
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
            tok(logged.input_tokens),
            tok(logged.read_tokens),
            tok(logged.write_tokens),
            *([tok(logged.write_1h_tokens)] if split else []),
            f"{logged.cost_usd:,.4f}",
            f"{logged.cost_usd / base:.1%}" if base else "—",
            "100.0%",
            "—",
        )
    console.print(table)
    if narrow and max(result.input_tokens, logged.input_tokens if logged else 0) >= 10_000:  # shortened
        console.print("Tokens in the table: k = thousand, M = million (rounded; exact in replay.json).")
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
        else "'vs none' is the row's cost as a share of no caching (100%; lower is cheaper)"
    )
    hour = (
        " 'of which 1h' ('1h' on a narrow terminal): the cache-write tokens written with the 1-hour TTL, billed at the model's 1-hour write "
        "price (the rest at the 5-minute one)."
        if split
        else ""
    )
    console.print(
        "Tokens: uncached input is billed at the input price, cache reads and writes at the model's cache "
        f"prices; USD is the input side only; {versus}.{billed}{hour}"
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
    output_usd = result.strategies["none"].output_cost_usd
    if result.output_tokens_note:  # the logged counts are not the final ones: say so where the figure is
        console.print(
            f"Output tokens (at least {result.output_tokens:,}) cost the same under every placement: at least "
            f"${output_usd:,.4f} ({escape(result.output_tokens_note)}).{spacing}"
        )
    else:
        console.print(
            f"Output tokens ({result.output_tokens:,}) cost the same under every placement: ${output_usd:,.4f}.{spacing}"
        )
    return table


def _print_repeats(result: ReplayResult, console: Console) -> None:
    """The ResponseCache and intention-cache counts (they need the agent's own calls: not on a Claude Code log)."""
    rc = result.response_cache
    console.print(
        f"ResponseCache: {rc.hits:,} of {_n(rc.requests, 'request')} answered (exact repeat within "
        f"{rc.ttl_s:g} s; {_n(rc.repeats, 'repeat')} at any distance)."
    )
    console.print(intention_paragraph(result))

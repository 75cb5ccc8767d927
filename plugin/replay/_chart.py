"""The PNG chart (matplotlib, Agg backend), three panels:

The rows are the terminal table's (``promptcache.replay._result_rows.shown_rows``, unavailable ones left out as
they have no cost) and panel 2's are its miss-cause table's (``cause_names``).

1. **The decision**: each row's cost as a share of no caching, the table's "vs none" figure (the one sign
   convention of the report: 100% is no caching, lower is cheaper), on a horizontal bar each, every bar labelled
   to 0.1%, with a dashed line at the current layout (``as-logged`` where the log records usage, else ``none``);
   the recommended row is drawn in the highlight colour (``bar_specs``), and where a cheaper bar is not the
   recommendation the axis says why (``why_not_cheapest``); ``none`` (always 100%) is left out, and named on the
   axis, where every other bar is under ``100 / _SQUASH`` % (``off_scale``): drawing it would squash them.
2. **Why the cache missed**: the USD of each miss cause (``promptcache.replay._causes``) of the current layout and
   of the recommended row, one stacked bar each (``cause_specs``).
3. Cumulative input-side cost per strategy over the replayed requests (``line_specs``); ``none`` is left out (and
   its total named) where panel 1 leaves it out, for the same reason.

In panel 3, strategies often cost the same to the token (``langchain-aws`` and ``anchored-tail`` on tight agent loops), so their
lines coincide. Each line therefore gets its own colour, dash pattern and marker, with the markers staggered along
the x axis; a line that lies on later ones (within 1% of the chart's height everywhere) is drawn wider and below
them, so each shows as a band around the next; and a line identical to an earlier one says so in the legend
(``= name``).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ._causes import CAUSES
from ._decision import Decision, decide
from ._engine import ReplayResult, StrategyTotals
from ._output_files import write_replacing
from ._result_rows import cause_names, is_claude_code, models_label, shown_rows, versus_base, versus_name

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "LINE_STYLES",
    "bar_specs",
    "cause_specs",
    "draw_chart",
    "line_specs",
    "off_scale",
    "why_not_cheapest",
    "write_chart",
]

#: (dash pattern, marker) per line, in drawing order; colours come from matplotlib's default cycle.
LINE_STYLES: tuple[tuple[str, str], ...] = (
    ("--", "o"),
    ("-", "s"),
    ("-.", "^"),
    (":", "D"),
    ("-", "v"),
    ("--", "P"),
    ("-.", "X"),
    (":", "*"),
)
_WIDTH, _WIDTH_STEP = 1.8, 1.8  # line width in points, and what each later line lying on it adds
_CLOSE = 0.01  # lines closer than this share of the chart's height at every request overlap
_LABEL_ROOM = 0.12  # share of panel 1's range left beyond the longest bar for its figure
_TITLE_CHARS, _TITLE_LINES = 100, 5  # panel 1's title: the decision sentence, wrapped
_SQUASH = 4.0  # ``none`` leaves panel 1 when its bar is this many times longer than every other (at least 1%)


class LineSpec(TypedDict):
    """One line of panel 3: ``x``/``y`` and the keyword arguments of matplotlib's ``Axes.plot``."""

    x: list[int]
    y: list[float]
    label: str
    linestyle: str
    linewidth: float
    marker: str
    markersize: int
    markevery: tuple[int, int]
    zorder: int
    alpha: float


class BarSpec(TypedDict):
    """One bar of panel 1 (see `bar_specs`)."""

    name: str
    share_pct: float
    label: str
    recommended: bool


class CauseSpec(TypedDict):
    """One row of panel 2 (see `cause_specs`): ``causes`` are ``(cause, usd)`` pairs."""

    name: str
    causes: list[tuple[str, float]]


def line_specs(result: ReplayResult) -> list[LineSpec]:
    """The lines `write_chart` draws, in drawing order: for each available strategy the keyword arguments of
    matplotlib's ``Axes.plot`` (``label``, ``linestyle``, ``linewidth`` in points, ``marker``, ``markevery``,
    ``zorder``, ...) plus ``x`` and ``y`` (request numbers from 1; cumulative USD)."""
    rows = [(n, r) for n, r in shown_rows(result, decide(result)).items() if not r.unavailable and r.cumulative_usd]
    versus = versus_name(result)
    top = max((max(r.cumulative_usd) for _, r in rows), default=0.0)
    specs: list[LineSpec] = []
    for i, (name, row) in enumerate(rows):
        ys = row.cumulative_usd
        base = versus_base(result, row)
        label = f"{name} ({row.cost_usd / base:.1%} of {versus})" if base else name
        same = next((other for other, earlier in rows[:i] if _same(earlier.cumulative_usd, ys)), None)
        if same is not None:
            label += f" = {same}"
        dashes, marker = LINE_STYLES[i % len(LINE_STYLES)]
        below = sum(_close(ys, later.cumulative_usd, _CLOSE * top) for _, later in rows[i + 1 :])
        every = max(len(rows), len(ys) // 8)  # at least one step per line, so the offsets below differ
        specs.append(
            {
                "x": list(range(1, len(ys) + 1)),
                "y": list(ys),
                "label": label,
                "linestyle": dashes,
                "linewidth": _WIDTH + _WIDTH_STEP * below,
                "marker": marker,
                "markersize": 6,
                "markevery": (i * every // len(rows), every),
                "zorder": 2 + i,
                "alpha": 0.9,
            }
        )
    return specs


def _rows(result: ReplayResult) -> tuple[str, dict[str, StrategyTotals]]:
    """The current layout's name and the rows panel 1 compares with it: the table's available rows."""
    decision = decide(result)
    current = decision.current if decision is not None else "none"
    return current, {n: r for n, r in shown_rows(result, decision).items() if not r.unavailable}


def bar_specs(result: ReplayResult) -> list[BarSpec]:
    """Panel 1: per row of the table (unavailable ones left out) ``{"name", "share_pct", "label", "recommended"}``,
    cheapest first; ``share_pct`` is the row's cost as a share of no caching, the table's "vs none" column
    (``promptcache.replay._result_rows.versus_base``), times 100; ``label`` that figure to 0.1% (``"18.5%"``)."""
    _, rows = _rows(result)
    decision = decide(result)
    specs: list[BarSpec] = []
    for name, row in rows.items():
        base = versus_base(result, row)
        if not base:
            continue
        share = row.cost_usd / base * 100
        recommended = decision is not None and name == (
            decision.strategy + ("@1h" if decision.action == "set-ttl" else "")
        )
        specs.append({"name": name, "share_pct": share, "label": f"{share:.1f}%", "recommended": recommended})
    return sorted(specs, key=lambda s: s["share_pct"])


def why_not_cheapest(result: ReplayResult, bars: list[BarSpec]) -> str | None:
    """Why the recommended bar is recommended although a bar is shorter (``None``: none is shorter, or nothing is
    recommended): the decision's own reason (``promptcache.replay._decision``)."""
    decision = decide(result)
    chosen = [b for b in bars if b["recommended"]]
    if decision is None or not chosen or not any(b["share_pct"] < chosen[0]["share_pct"] - 0.05 for b in bars):
        return None
    if decision.unreliable is not None:
        return "the simulation does not reproduce this log's bill, so no shorter bar is shown to be cheaper"
    if is_claude_code(result) and decision.current == "as-logged":
        return "Claude Code places its own cache points; the shorter bars are layouts for agents of your own"
    error = abs((result.fidelity.cost_difference if result.fidelity is not None else None) or 0.0)
    if error:
        return f"the shorter bars differ by less than the simulator's own error on this log (±{error:.1%})"
    return "the shorter bars are not a placement you install alone (see the report's decision)"


def cause_specs(result: ReplayResult) -> list[CauseSpec]:
    """Panel 2: per strategy of the terminal's miss-cause table (``cause_names``) ``{"name", "causes": [(cause,
    usd), ...]}`` in ``CAUSES`` order, causes without dollars left out (a row without any too)."""
    out: list[CauseSpec] = []
    for name in cause_names(result, decide(result)):
        causes = result.miss_causes.get(name) or {}
        pairs = [(c, causes[c].cost_usd) for c in CAUSES if c in causes and causes[c].cost_usd > 0]
        if pairs:
            out.append({"name": name, "causes": pairs})
    return out


def off_scale(result: ReplayResult, bars: list[BarSpec]) -> list[BarSpec]:
    """The ``bar_specs`` entries panel 1 leaves out (at most ``none``'s): not the current layout nor recommended,
    where every other bar is under ``100 / _SQUASH`` % of no caching, so drawing ``none`` at 100% would squash the
    rows that matter into one band."""
    current, _ = _rows(result)
    widest = max([b["share_pct"] for b in bars if b["name"] != "none"], default=100.0)
    return [
        b
        for b in bars
        if b["name"] == "none" and current != "none" and not b["recommended"] and widest * _SQUASH < b["share_pct"]
    ]


def write_chart(result: ReplayResult, path: str | Path) -> Path:
    """Draw the three panels of the module docstring to ``path`` (PNG). Returns the written path."""
    fig = draw_chart(result)
    return write_replacing(path, lambda tmp: fig.savefig(tmp, format="png"))  # a link at ``path`` is replaced


def draw_chart(result: ReplayResult) -> Figure:
    """The chart's matplotlib ``Figure`` (Agg backend; three axes, in the module docstring's order)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 12), dpi=100)
    FigureCanvasAgg(fig)  # a renderer for tight_layout and for measuring what is drawn
    bars_ax, causes_ax, lines_ax = fig.subplots(3, 1, gridspec_kw={"height_ratios": [3, 2, 3]})
    current, _ = _rows(result)
    bars = bar_specs(result)
    off = off_scale(result, bars)
    bars = [b for b in bars if b not in off]
    if bars:
        said = verdict(decide(result))
        _draw_bars(bars_ax, bars, next((b["share_pct"] for b in bars if b["name"] == current), None), said)
        note = "; none (100%) left out: it would squash the others" if off else ""
        why = why_not_cheapest(result, bars)
        decision = decide(result)
        chosen = next((b["name"] for b in bars if b["recommended"]), "")
        said = f"{chosen}: {verdict(decision)}, although" if decision is not None else "although"
        why = "\n" + textwrap.fill(f"{said} shorter bars exist: {why}", _TITLE_CHARS) if why else ""
        bars_ax.set_xlabel(f"cost as a share of no caching, % (dashed: {current}, the current layout){note}{why}")
        if decision is not None:  # the whole sentence, wrapped (a cut one could drop what it decides)
            lines = textwrap.wrap(decision.sentence, _TITLE_CHARS)
            shown = lines[:_TITLE_LINES]
            if len(lines) > _TITLE_LINES:
                shown[-1] = shown[-1].rstrip(".,;:") + " ..."
            bars_ax.set_title(_plain("\n".join(shown)), fontsize=9, loc="left")
    cells = cause_specs(result)
    left = [0.0] * len(cells)
    colour = {c: f"C{i}" for i, c in enumerate(CAUSES)}
    seen: set[str] = set()
    for cause in CAUSES:
        widths = [dict(cell["causes"]).get(cause, 0.0) for cell in cells]
        if any(widths):
            label = None if cause in seen else cause
            seen.add(cause)
            causes_ax.barh(range(len(cells)), widths, left=left, color=colour[cause], label=label)
            left = [a + w for a, w in zip(left, widths)]
    causes_ax.set_yticks(range(len(cells)), [cell["name"] for cell in cells], fontsize=8)
    causes_ax.set_xlabel("USD of cache-write and uncached tokens, by miss cause")
    for y, total in enumerate(left):
        causes_ax.annotate(_plain(f"${total:,.2f}"), (total, y), xytext=(3, 0), textcoords="offset points", va="center",
                           fontsize=8)  # fmt: skip
    if left:
        causes_ax.set_xlim(0, max(left) * 1.15 or 1.0)
    if seen:  # beside the bars, never on them
        causes_ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    hidden = ""
    for spec in line_specs(result):
        if off and spec["label"].split(" ")[0] == "none":
            hidden = f"; none (no caching, ${spec['y'][-1]:,.2f}) left out: it would squash the others"
            continue
        options = dict(spec)
        lines_ax.plot(options.pop("x"), options.pop("y"), **options)
    lines_ax.set_xlabel(_plain(f"request (replay order){hidden}"))
    lines_ax.set_ylabel("cumulative input-side cost, USD")
    title = f"{models_label(result)}: {result.conversations} conversations, {result.requests:,} requests"
    lines_ax.set_title(_plain(textwrap.fill(title, _TITLE_CHARS)))
    lines_ax.grid(alpha=0.3)
    lines_ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def verdict(decision: Decision | None) -> str:
    """What the decision says of the row it recommends, for that row's label: ``"keep"`` (the current layout stays,
    however many bars are shorter), ``"switch to"``, ``"use the 1-hour TTL"``, ``"leave caching off"`` or
    ``"turn caching off"``; ``""`` without a decision."""
    if decision is None:
        return ""
    if decision.action == "disable":
        return "leave caching off" if decision.current == "none" else "turn caching off"
    return {"keep": "keep", "switch": "switch to", "set-ttl": "use the 1-hour TTL"}.get(decision.action, "")


def _draw_bars(ax: Axes, bars: list[BarSpec], current: float | None, said: str) -> None:
    """Panel 1: one bar per row from 0, its figure at its end, the recommended row green and labelled with what the
    decision says of it (``verdict``), a dashed line at the ``current`` layout's share; the axis leaves room for
    the figures."""
    ys = list(range(len(bars)))
    shares = [b["share_pct"] for b in bars]
    ax.barh(ys, shares, color=["tab:green" if b["recommended"] else "tab:gray" for b in bars])
    ax.set_yticks(ys, [b["name"] + (f"  ({said})" if b["recommended"] and said else "") for b in bars], fontsize=8)
    for tick, b in zip(ax.get_yticklabels(), bars):
        if b["recommended"]:
            tick.set_color("tab:green")
            tick.set_fontweight("bold")
    high = max(1.0, *shares)
    # figures are ~6 characters: at 8 pt they take ~8% of the panel's width
    ax.set_xlim(0, high * (1 + _LABEL_ROOM))
    for y, b in zip(ys, bars):
        ax.annotate(b["label"], (b["share_pct"], y), xytext=(3, 0), textcoords="offset points", va="center",
                    ha="left", fontsize=8)  # fmt: skip
    if current is not None:
        ax.axvline(current, color="black", linewidth=0.8, linestyle="--")


def _plain(text: str) -> str:
    """``text`` with its dollar signs escaped: matplotlib reads a pair of them as a formula."""
    return text.replace("$", r"\$")


def _close(a: list[float], b: list[float], tolerance: float) -> bool:
    """Whether two cumulative-cost series differ by at most ``tolerance`` USD at every request."""
    return len(a) == len(b) and all(abs(x - y) <= tolerance for x, y in zip(a, b))


def _same(a: list[float], b: list[float]) -> bool:
    """Whether two cumulative-cost series are equal point by point (to 1e-12 USD)."""
    return _close(a, b, 1e-12)

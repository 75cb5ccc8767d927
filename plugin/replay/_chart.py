"""The PNG chart: cumulative input-side cost per strategy over the replayed requests (matplotlib, Agg backend).

Strategies often cost the same to the token (``langchain-aws`` and ``anchored-tail`` on tight agent loops), so their
lines coincide. Each line therefore gets its own colour, dash pattern and marker, with the markers staggered along
the x axis; a line that lies on later ones (within 1% of the chart's height everywhere) is drawn wider and below
them, so each shows as a band around the next; and a line identical to an earlier one says so in the legend
(``= name``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._engine import ReplayResult
from ._output_files import write_replacing

__all__ = ["LINE_STYLES", "line_specs", "write_chart"]

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


def line_specs(result: ReplayResult) -> list[dict[str, Any]]:
    """The lines :func:`write_chart` draws, in drawing order: for each available strategy the keyword arguments of
    matplotlib's ``Axes.plot`` (``label``, ``linestyle``, ``linewidth`` in points, ``marker``, ``markevery``,
    ``zorder``, ...) plus ``x`` and ``y`` (request numbers from 1; cumulative USD)."""
    rows = [(n, r) for n, r in result.strategies.items() if not r.unavailable and r.cumulative_usd]
    top = max((max(r.cumulative_usd) for _, r in rows), default=0.0)
    specs: list[dict[str, Any]] = []
    for i, (name, row) in enumerate(rows):
        ys = row.cumulative_usd
        rel = result.relative(name)
        label = name if rel is None else f"{name} ({rel:.1%} of none)"
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


def write_chart(result: ReplayResult, path: str | Path) -> Path:
    """Draw cumulative USD (y) against request number in replay order (x), one line per available strategy
    (:func:`line_specs`).

    Uses matplotlib's non-interactive Agg backend (no display needed). Returns the written path.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 5), dpi=110)
    ax = fig.add_subplot()
    for spec in line_specs(result):
        options = dict(spec)
        ax.plot(options.pop("x"), options.pop("y"), **options)
    ax.set_xlabel("request (replay order)")
    ax.set_ylabel("cumulative input-side cost, USD")
    ax.set_title(f"{result.model_id}: {result.conversations} conversations, {result.requests:,} requests")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return write_replacing(path, lambda tmp: fig.savefig(tmp, format="png"))  # a link at ``path`` is replaced


def _close(a: list[float], b: list[float], tolerance: float) -> bool:
    """Whether two cumulative-cost series differ by at most ``tolerance`` USD at every request."""
    return len(a) == len(b) and all(abs(x - y) <= tolerance for x, y in zip(a, b))


def _same(a: list[float], b: list[float]) -> bool:
    """Whether two cumulative-cost series are equal point by point (to 1e-12 USD)."""
    return _close(a, b, 1e-12)

"""The PNG chart: cumulative input-side cost per strategy over the replayed requests (matplotlib, Agg backend)."""

from __future__ import annotations

from pathlib import Path

from .engine import ReplayResult

__all__ = ["write_chart"]


def write_chart(result: ReplayResult, path: str | Path) -> Path:
    """Draw cumulative USD (y) against request number in replay order (x), one line per available strategy.

    Uses matplotlib's non-interactive Agg backend (no display needed). Returns the written path.
    """
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib.figure import Figure

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig = Figure(figsize=(9, 5), dpi=110)
    ax = fig.add_subplot()
    for name, row in result.strategies.items():
        if row.unavailable or not row.cumulative_usd:
            continue
        rel = result.relative(name)
        label = name if rel is None else f"{name} ({rel:.1%} of none)"
        ax.plot(
            range(1, len(row.cumulative_usd) + 1),
            row.cumulative_usd,
            label=label,
            linestyle="--" if name == "none" else "-",
        )
    ax.set_xlabel("request (replay order)")
    ax.set_ylabel("cumulative input-side cost, USD")
    ax.set_title(f"{result.model_id}: {result.conversations} conversations, {result.requests:,} requests")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(target)
    return target

"""The chart labels the row the decision picks by what the decision says of it (keep, switch to, ...), not
"recommended": the log's own layout kept among shorter bars is "keep"."""

from __future__ import annotations

from pathlib import Path

from promptcache.replay._chart import draw_chart
from promptcache.replay._engine import DEFAULT_STRATEGIES, run_replay

ROOT = Path(__file__).resolve().parents[2]
MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


def _ticks(path: Path, **options: float) -> list[str]:
    result = run_replay([str(path)], MODEL, DEFAULT_STRATEGIES, **options)
    return [t.get_text() for t in draw_chart(result).axes[0].get_yticklabels()]


def test_a_kept_layout_is_labelled_keep() -> None:
    ticks = _ticks(ROOT / "tests" / "data" / "claude_code" / "folder-session")
    assert ticks == [
        "last-message",
        "langchain-aws",
        "anchored-tail",
        "as-logged  (keep)",
        "anchored-tail@1h",
        "multi-point",
        "none",
    ]


def test_a_placement_to_switch_to_is_labelled_so() -> None:
    ticks = _ticks(ROOT / "examples" / "data" / "sample_conversations.json", gap_s=30.0)
    assert [t for t in ticks if "(" in t] == ["anchored-tail  (switch to)"]

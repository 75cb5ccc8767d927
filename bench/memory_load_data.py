"""The labelled load-decision questions in tests/data/, as conversations for training and evaluation.

Each row becomes ``(earlier user turns, question, is_general, group, previous label)``: ``previous`` / ``history``
fields give the earlier turns; the label of the turn before comes from the row's group (a ``followup_work`` /
``switch_conceptual`` row follows a work turn, ``followup_conceptual`` / ``switch_work`` a general one).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
TRAIN_FILES = ("memory_load_questions.jsonl", "memory_load_code_and_trivia.jsonl", "memory_load_grid.jsonl")
"""What the shipped model was fitted on."""
HELDOUT_FILES = (
    "memory_load_blind.jsonl",
    "memory_load_questions_heldout.jsonl",
    "memory_load_code_and_trivia_heldout.jsonl",
)
"""Never fitted on: the held-out evaluation (``bench/memory_load_eval.py``)."""

_PREVIOUS = {
    "followup_work": "work",
    "switch_conceptual": "work",
    "followup_conceptual": "general",
    "switch_work": "general",
}


class Row(NamedTuple):
    history: list[str]
    question: str
    general: bool
    group: str
    previous: str
    source: str


def _row(record: dict[str, Any], source: str) -> Row:
    history = list(record.get("history") or ([record["previous"]] if record.get("previous") else []))
    group = record["group"]
    previous = _PREVIOUS.get(group, "none") if history else "none"
    if record.get("history"):
        previous = "general"  # the conversations in the code-and-trivia files end with a general turn
    return Row(history, record["question"], bool(record["conceptual"]), group, previous, source)


def read_rows(names: tuple[str, ...]) -> list[Row]:
    """The rows of the named files (in file order)."""
    out = []
    for name in names:
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(_row(json.loads(line), name))
    return out

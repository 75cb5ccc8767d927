"""Thresholds calibrated offline and shipped as data (``data/thresholds.json``), so no lookup calibrates.

For the default local model (`local_embeddings`, all-MiniLM-L6-v2) the threshold `IntentionMemory` uses for a
``max_error`` is looked up here: computed by ``python bench/intention_thresholds.py`` on the package's labelled
pairs (``data/calibration_pairs.jsonl``, whose SHA-256 the file records; a test checks it against the pairs, so
the table cannot silently describe other pairs). What it was measured on is in bench/README.md ("What each
constant was measured on").
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.resources import files

from promptcache._types import JSONObject

__all__ = ["shipped_threshold", "shipped_table"]


@lru_cache(maxsize=1)
def shipped_table() -> JSONObject:
    """The shipped table: ``{"pairs_sha256": str, "thresholds": {model name: {max_error as text: threshold}}}``.

    Raises:
        ValueError: the shipped file is not a JSON object (a damaged installation).
    """
    raw = files("promptcache.intention").joinpath("data/thresholds.json").read_text(encoding="utf-8")
    table = json.loads(raw)
    if not isinstance(table, dict):
        raise ValueError("promptcache/intention/data/thresholds.json is not a JSON object")
    return table


def shipped_threshold(name: str, max_error: float) -> float | None:
    """The shipped threshold of the model named ``name`` (an `EmbeddingsSimilarity` name) for ``max_error``, or
    ``None`` when none was shipped for that pair."""
    thresholds = shipped_table().get("thresholds")
    by_error = thresholds.get(name) if isinstance(thresholds, dict) else None
    value = by_error.get(repr(float(max_error))) if isinstance(by_error, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None

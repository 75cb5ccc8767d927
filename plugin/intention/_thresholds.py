"""How an `IntentionMemory` chooses its threshold: as given, calibrated (`calibrate`), shipped, or a default.

Calibration never happens in a lookup: for the default local model the threshold calibrated offline is shipped with
the package (`promptcache.intention._calibrated`); for any other model it is `DEFAULT_UNCALIBRATED_THRESHOLD` until
`Thresholds.calibrate` is called (or ``threshold=`` given).
"""

from __future__ import annotations

from typing import Any

from promptcache._log import get_logger
from promptcache.intention._calibrated import shipped_threshold
from promptcache.intention._checks import check_unit
from promptcache.intention._defaults import DEFAULT_INTENTION_THRESHOLD, DEFAULT_UNCALIBRATED_THRESHOLD
from promptcache.intention._similarity import EmbeddingsSimilarity, Similarity

__all__ = ["Thresholds"]

_log = get_logger("promptcache.intention")


class Thresholds:
    """The ``threshold`` of `IntentionMemory` (a mixin: the memory sets the attributes below)."""

    _threshold: float | None
    recall: bool
    calibrates: bool
    """Built with ``embeddings=`` (``similarity=`` an ``Embeddings`` keeps `DEFAULT_INTENTION_THRESHOLD`)."""
    similarity: Similarity
    max_error: float
    exact_only: bool

    @property
    def threshold(self) -> float:
        """``1.0``: exact matches only; below it, the least similarity of a match the similarity decides (with
        ``embeddings=``: the embeddings stage's cosine; the lexical stage accepts at every threshold below 1.0, as
        `promptcache.intention._calibrate.score_pairs` counts it). As given; else, with ``embeddings=``, the
        threshold calibrated for ``max_error``: set by `calibrate`, or for the default local model
        (`local_embeddings`) shipped with the package (`promptcache.intention._calibrated`), else
        `DEFAULT_UNCALIBRATED_THRESHOLD` until `calibrate` is called; without ``embeddings=`` (also with
        ``similarity=`` an ``Embeddings``) `DEFAULT_INTENTION_THRESHOLD`. Never computed by a lookup."""
        if self._threshold is not None:
            return self._threshold
        if not self.calibrates:
            return DEFAULT_INTENTION_THRESHOLD
        shipped = shipped_threshold(self.similarity.name, self.max_error)
        return DEFAULT_UNCALIBRATED_THRESHOLD if shipped is None else shipped

    @threshold.setter
    def threshold(self, value: float) -> None:
        self._threshold = check_unit(value, "threshold")
        self.exact_only = self._threshold == 1.0

    def calibrate(self, pairs: Any = None) -> float:
        """Pick the threshold for ``max_error`` from labelled pairs with this memory's embeddings, and use it.

        The pairs are embedded (every distinct text once, with ``embed_documents``), vetoed as a lookup vetoes
        them, and the lowest threshold whose accepted pairs hold at most ``max_error`` wrong hits on the
        calibration half is taken, stated as the shortest decimal accepting the same pairs
        (`promptcache.intention._calibrate.pick_threshold`; the command ``promptcache calibrate-intentions
        PAIRS.jsonl`` prints the table behind it and this number). Explicit, so no lookup pays
        for it: call it once at start-up (or pass the value it returned as ``threshold=``).

        Args:
            pairs: a path (``str`` or ``pathlib.Path``) of a JSONL file of ``{"stored", "asked", "same",
                "source"}`` objects, a sequence of `promptcache.intention._calibrate.Pair`, or ``None`` (the
                package's pairs).

        Returns:
            The threshold now in use (in ``[0, 1]``).

        When the held-out half is too small to show the wrong-hit rate within ``max_error`` (95% upper bound,
        `promptcache.intention._calibrate.held_out_note`), a warning on the ``promptcache.intention`` logger says so
        and how many pairs would be needed; the threshold is still used.

        Raises:
            ValueError: built without ``embeddings=``; a pairs file that is not labelled pairs (line named); no
                pairs.
        """
        if not self.recall:
            raise ValueError("calibrate() needs IntentionMemory(embeddings=...): the lexical default is not calibrated")
        from pathlib import Path

        from promptcache.intention._calibrate import _half, held_out_note, load_pairs, pick_threshold, score_pairs

        use = load_pairs(pairs) if pairs is None or isinstance(pairs, (str, Path)) else list(pairs)
        sim = self.similarity
        assert isinstance(sim, EmbeddingsSimilarity)
        threshold, _, held = pick_threshold(use, score_pairs(sim.embeddings, use), self.max_error)
        shown, note = held_out_note(held, sum(_half(p) for p in use), self.max_error)
        if not shown:
            _log.warning("IntentionMemory.calibrate(): %s", note)
        self.threshold = threshold
        return self.threshold

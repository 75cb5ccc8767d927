"""The defaults of `IntentionMemory`, each with what it was measured on, and `IntentionStats`."""

from __future__ import annotations

from dataclasses import dataclass

from promptcache._metrics import PluginStats

__all__ = [
    "DEFAULT_INTENTION_MARGIN",
    "DEFAULT_INTENTION_THRESHOLD",
    "DEFAULT_INTENTION_TTL_SECONDS",
    "DEFAULT_MAX_ERROR",
    "DEFAULT_PROPOSALS",
    "DEFAULT_PROPOSAL_FLOOR",
    "DEFAULT_SUGGESTIONS",
    "DEFAULT_UNCALIBRATED_THRESHOLD",
    "IntentionStats",
]

DEFAULT_INTENTION_TTL_SECONDS = 3600.0
"""How long a tool result is kept (seconds). Tool results go stale; one hour is a conservative default."""
DEFAULT_INTENTION_THRESHOLD = 0.5
"""Default minimum similarity of a similar match (lexical scale) among the candidates the verifier accepted. The
verifier decides whether two intentions mean the same; the threshold only keeps out equivalent-by-rule pairs that
share little text. Measured on the package's hand-written paraphrase set (tests/data/intention_paraphrases.tsv):
every verified paraphrase pair scores at least 0.6; Banking77 precision by threshold is in bench/README.md
("Intention cache")."""
DEFAULT_MAX_ERROR = 0.01
"""With embeddings: the wrong-hit rate (1 - precision) the calibrated threshold keeps to on held-out labelled pairs
(`promptcache.intention._calibrate`)."""
DEFAULT_UNCALIBRATED_THRESHOLD = 0.95
"""With embeddings of a model the package has no calibrated threshold for, until `IntentionMemory.calibrate` is
called: the least cosine of an embeddings-stage hit. Conservative: with all-MiniLM-L6-v2 on the package's labelled
pairs every threshold from 0.85 up accepted no wrong pair (bench/README.md, "With embeddings proposing and a
calibrated check accepting"); 0.95 keeps a margin for models whose cosines run higher."""
DEFAULT_PROPOSALS = 5
"""With embeddings: stored intentions proposed per lookup (the most similar ones), each then vetoed or accepted."""
DEFAULT_PROPOSAL_FLOOR = 0.5
"""With embeddings and a model verifier: the least cosine of a proposal the model is asked about. On the package's
calibration pairs with all-MiniLM-L6-v2, paraphrases below it are rare (bench/README.md, "Intention cache")."""
DEFAULT_SUGGESTIONS = 3
"""Earlier results `IntentionMemory.suggest` (and so ``retrieve_memory``) shows for one intention."""
DEFAULT_INTENTION_MARGIN = 0.15
"""Verified candidates within this much of the best similarity count as equally good; the newest of them is served
(a later result of the same request is the fresher one)."""


@dataclass(frozen=True, slots=True)
class IntentionStats(PluginStats):
    """`PluginStats` plus the model verifier's cost: ``verifier_calls`` (model calls), ``verifier_input_tokens``
    and ``verifier_output_tokens`` (as the replies' ``usage_metadata`` report them)."""

    verifier_calls: int = 0
    verifier_input_tokens: int = 0
    verifier_output_tokens: int = 0

"""Does skipping project state pay when the prompt is cached? The cache side of the typed-memory load decision.

Without prompt caching, leaving the project-state section out of a general-knowledge turn saves its tokens and
costs nothing. With prompt caching it changes the memory block, and every token cached after the block (the
conversation so far) is written again instead of read -- and once more when a later work turn puts the section
back. So with caching on the decision is made per conversation: the block keeps what it held on the previous turn
unless skipping saves more than the writes it causes (`skip_pays`):

    skip  iff  project_tokens * READ  >  2 * history_tokens * (WRITE - READ)

- ``project_tokens * READ``: what the section costs on this turn's request while cached (read price);
- ``history_tokens * (WRITE - READ)``: the extra cost of writing the conversation after the block instead of
  reading it; twice, for the change now and the change back on the next work turn.

A conversation whose block does not hold the section (its first turn, or every turn so far was general) skips for
free: nothing after the block is cached yet, or the block does not change. A work question always loads the
section (a wrong skip costs a wrong answer); after that the block keeps it.

Prices are multiples of the model's input price: `READ` = 0.1 and `WRITE` = 1.25, the cache-read and
5-minute cache-write prices Anthropic lists for Claude models (Anthropic "Prompt caching" pricing; the same
multiples the replay's price table uses for the Claude models on Bedrock, ``promptcache.replay.price_for``).
Tokens are estimated as characters / `CHARS_PER_TOKEN` (4, the usual English average for BPE tokenizers):
the rule compares sizes that differ by orders of magnitude in practice, so an estimate is enough.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["CHARS_PER_TOKEN", "READ", "WRITE", "estimate_tokens", "skip_pays"]

READ = 0.1
"""Cache-read price as a multiple of the input price (Anthropic prompt-caching pricing, Claude models)."""
WRITE = 1.25
"""5-minute cache-write price as a multiple of the input price (Anthropic prompt-caching pricing)."""
CHARS_PER_TOKEN = 4
"""Characters per token of the size estimate."""


def estimate_tokens(texts: Iterable[str]) -> int:
    """Estimated tokens of ``texts`` (total characters / `CHARS_PER_TOKEN`, rounded up)."""
    chars = sum(len(t) for t in texts)
    return -(-chars // CHARS_PER_TOKEN)


def skip_pays(project_tokens: int, history_tokens: int) -> bool:
    """Whether leaving the project-state section out of a block that holds it saves more than it costs in cache
    writes (module docstring).

    Args:
        project_tokens: estimated tokens of the project-state section (>= 0).
        history_tokens: estimated tokens of the conversation that follows the block (>= 0).

    Returns:
        True when the read price of the section exceeds twice the extra write cost of the history.

    Raises:
        ValueError: a negative count (named).
    """
    for name, value in (("project_tokens", project_tokens), ("history_tokens", history_tokens)):
        if value < 0:
            raise ValueError(f"{name} must be >= 0, got {value!r}")
    return project_tokens * READ > 2 * history_tokens * (WRITE - READ)

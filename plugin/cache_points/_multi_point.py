"""``MultiPointStrategy``: Roo-Code's multi-point placement algorithm, as its Bedrock cache-strategy documentation gives it.

The rules, as that documentation's text and five examples give them:

1. System: a point follows the system prompt when it alone reaches the model's minimum (and ``system`` is a
   cachable field); it takes one slot first.
2. Points go only after user messages, and each covers at least the minimum (its segment: the messages after the
   previous point through this one).
3. New conversation (no usable previous placements): the last user message of the range whose segment reaches the
   minimum gets a point, then the search repeats after it while slots remain (Example 1: ``[2]``).
4. Growing conversation: previous points are kept (N-1 preservation). The candidate is the last user message after
   the last kept point whose segment reaches the minimum.
   - A free slot: the candidate is added (Examples 2 and 3: ``[2, 4]``, ``[2, 4, 6]``).
   - All slots used: the *new tokens* (everything after the last kept point) are compared with the *smallest gap*
     (the smallest segment between two consecutive kept points; the stretch before the first point is not a gap).
     Only when the new tokens exceed the gap by 20% (`REALLOCATION_INCREASE`) is the point that closes the
     smallest gap removed and the candidate added (Example 5: ``[2, 6, 8]`` -> ``[2, 6, 10]``); otherwise nothing
     changes (Example 4).
   - With a single slot there is no gap to compare: the point moves to the candidate (Bedrock's ~20-block lookback
     still reads the previous prefix, so only the new part is written).

Guards the documentation lacks: previous placements that no longer point at a placeable user message of this history are
rebased by fingerprint (history truncated or summarised) or dropped; kept points whose segment fell under the
minimum are merged into the next; never more points than the budget (the model's maximum, capped at Bedrock's 4,
minus what the caller already used). Where Roo-Code's code and its documentation disagree, the documentation wins.
"""

from __future__ import annotations

from promptcache.cache_points._strategy import CachePointPlacement, CacheResult, CacheStrategy

__all__ = ["REALLOCATION_INCREASE", "MultiPointStrategy"]

#: New messages must exceed the smallest gap by this factor before a point is moved (Roo-Code's documentation, Example 5: 260 * 1.2).
REALLOCATION_INCREASE = 1.2


class MultiPointStrategy(CacheStrategy):
    """Places up to the model's maximum points over system + messages (see the module docstring).

    Usage::

        result = MultiPointStrategy(CacheStrategyConfig(model_info, system, messages,
                                                        previous_placements=stored)).determine_optimal_cache_points()
        stored = result.placements
    """

    def determine_optimal_cache_points(self) -> CacheResult:
        """Decide the system point and the message points; return them with copies of system and messages."""
        config, info = self.config, self.model_info
        if not config.use_prompt_cache or not info.supports_prompt_cache or not config.messages:
            return self.format_without_cache_points()
        remaining = self.point_budget()
        system_point = False
        if (
            remaining > 0
            and "system" in info.cachable_fields
            and config.system_prompt
            and self.meets_min_token_threshold(self.system_token_count)
        ):
            system_point = True
            remaining -= 1
        placements: list[CachePointPlacement] = []
        if remaining > 0 and "messages" in info.cachable_fields:
            placements = self.determine_message_cache_points(info.min_tokens_per_cache_point, remaining)
        return self.format_result(system_point, placements)

    # -- message points ------------------------------------------------------------------------------------
    def determine_message_cache_points(self, min_tokens: int, remaining: int) -> list[CachePointPlacement]:
        """Message placements for ``remaining`` (>= 1) slots, each segment >= ``min_tokens``."""
        last_index = len(self.config.messages) - 1
        kept = self._usable_previous(min_tokens, remaining)
        if not kept:
            placements: list[CachePointPlacement] = []
            start = 0
            while start <= last_index and len(placements) < remaining:
                placement = self.find_optimal_placement_for_range(start, last_index, min_tokens)
                if placement is None:
                    break
                placements.append(placement)
                start = placement.index + 1
            return placements

        last_kept = kept[-1]
        candidate = self.find_optimal_placement_for_range(last_kept + 1, last_index, min_tokens)
        if candidate is None:
            return self._placements(kept)
        if len(kept) < remaining:
            return self._placements([*kept, candidate.index])
        if len(kept) == 1:
            return self._placements([candidate.index])
        new_tokens = self.tokens_between(last_kept + 1, last_index)
        gap, closing = self._smallest_gap(kept)
        if new_tokens > gap * REALLOCATION_INCREASE:
            rest = kept[:closing] + kept[closing + 1 :]
            moved = self.find_optimal_placement_for_range(rest[-1] + 1, last_index, min_tokens)
            return self._placements([*rest, moved.index] if moved else rest)
        return self._placements(kept)

    def find_optimal_placement_for_range(self, start: int, end: int, min_tokens: int) -> CachePointPlacement | None:
        """The last placeable user message in ``start..end`` if the tokens from ``start`` through it reach
        ``min_tokens``; else ``None``."""
        for index in range(end, start - 1, -1):
            if self.is_placement_target(index):
                covered = self.tokens_between(start, index)
                if covered >= min_tokens:
                    return CachePointPlacement._message(index, covered, self.fingerprint(index))
                return None
        return None

    # -- helpers -------------------------------------------------------------------------------------------
    def _placements(self, indices: list[int]) -> list[CachePointPlacement]:
        out, start = [], 0
        for index in indices:
            out.append(CachePointPlacement._message(index, self.tokens_between(start, index), self.fingerprint(index)))
            start = index + 1
        return out

    def _smallest_gap(self, indices: list[int]) -> tuple[int, int]:
        """(tokens, position) of the smallest segment between consecutive points (position >= 1; earliest on ties)."""
        best = None
        for pos in range(1, len(indices)):
            tokens = self.tokens_between(indices[pos - 1] + 1, indices[pos])
            if best is None or tokens < best[0]:
                best = (tokens, pos)
        assert best is not None
        return best

    def _usable_previous(self, min_tokens: int, remaining: int) -> list[int]:
        """Indices of previous placements that still hold, rebased when their message moved, trimmed to budget."""
        previous = [p for p in self.stored_placements if p.type == "message"]
        if not previous:
            return []
        n = len(self.config.messages)
        by_fingerprint: dict[str, int] | None = None
        indices: set[int] = set()
        for p in previous:
            start: int = p.index
            index: int | None = start
            if p.fingerprint is not None:
                if not (start < n and self.is_placement_target(start) and self.fingerprint(start) == p.fingerprint):
                    if by_fingerprint is None:
                        by_fingerprint = {}
                        for i in range(n):
                            if self.is_placement_target(i):
                                by_fingerprint.setdefault(self.fingerprint(i), i)
                    index = by_fingerprint.get(p.fingerprint)
            elif not (start < n and self.is_placement_target(start)):
                index = None
            if index is not None:
                indices.add(index)
        kept, start = [], 0
        for index in sorted(indices):
            if self.tokens_between(start, index) >= min_tokens:
                kept.append(index)
                start = index + 1
        while len(kept) > remaining:
            if len(kept) == 1:
                return []
            _, closing = self._smallest_gap(kept)
            del kept[closing]
        return kept

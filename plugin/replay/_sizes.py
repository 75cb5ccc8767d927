"""True token sizes from logged usage: every block's size fitted so each request's prompt is what the log billed.

With usage logged, a request's real prompt size is known: ``Usage.prompt_tokens`` (uncached input + cache read +
cache write). The replay then simulates every strategy on those sizes instead of on an estimate:

1. **The part the log never shows** (``Conversation.meta["hidden_prefix"]``: system prompt, tool schemas,
   attached context — absent from a Claude Code transcript) is a run of blocks at the start of the prompt, one per
   cached level (``hidden_levels``): every read, over the conversation's calls, that is no longer than the first
   prompt minus half the estimated size of its visible messages is a prefix of the first prompt that some traffic
   had cached, so a breakpoint of the client ends there; the longest is the part's size. Without such a read, one
   block of the first prompt minus the estimate of its visible messages.
2. **Each message's size from the growth between calls**: the tokens a request adds over the previous logged one
   are spread over the blocks it adds in proportion to their estimated sizes (largest remainder, so the sum is
   exact). A request that logs a smaller prompt than its predecessor (content the client dropped) leaves its new
   blocks at 0 tokens; later requests are fitted from the sizes already assigned, so they stay exact.
3. Blocks after the last logged request (the final reply) keep their estimate. Without any usage, a Claude Code
   conversation's unlogged part is ``unlogged_prefix_tokens``: ``CLAUDE_CODE_CONTEXT_TOKENS`` for the main thread
   (system prompt, tools and the context attached to the first message), ``CLAUDE_CODE_SUBAGENT_TOKENS`` for a Task
   sub-agent (its own system prompt and tools; none of the main thread's attached context), and
   ``CLAUDE_CODE_COMPACTED_TOKENS`` for the conversation that continues after a compaction (system prompt, tools and
   the context Claude Code attaches again with the summary).
4. When a conversation's first call read from the cache more than its fixed part (it repeats history another
   conversation cached: a compaction call, a resumed session), its first prompt is fitted in two parts so that a
   block boundary falls exactly where the read ends (the boundary whose estimated position is nearest); the replay
   then starts every simulator with that prefix cached (``promptcache.replay._engine``: the log shows it was).

5. **Where the log names the caller's cache points** (Bedrock invocation logs: ``meta["cache_points"]``, given
   with ``layout``), a request that wrote at both TTLs pins a boundary too: its 1-hour write ends at its last
   1-hour point (1-hour points come first), so the new blocks up to that point share read + 1-hour write tokens and
   the rest the remainder. The split between the TTLs, which the bill prices differently, then comes from the
   log instead of from the estimate's proportions.

6. **The size Claude Code logs at a compaction** (no usage logged): a ``compact_boundary`` record carries
   ``compactMetadata.preTokens``, the tokens Claude Code counted in the context it compacted: the last call's
   prompt and its reply (258c7280: 167,094 against a logged last prompt of 166,759 plus 301 output tokens).
   The reader gives it to the conversation that ends there (``meta["compacted_tokens"]``), and its messages
   share that size less the unlogged prefix in proportion to their estimates (as rule 2 spreads a logged growth).
   The one size a usage-free log states; where usage is logged the logged sizes are used instead.

Requests without usage in between are covered by the next logged one (their blocks share its growth).

**A broken prefix** (``split_on_prefix_change``): when a later call of a hidden-prefix conversation reads from the
cache less than the previous call had in the cache when it finished (its cache read + cache write), but not
nothing, and sooner than that write's TTL (so expiry does not explain it), the log says everything after what it
read missed the cache: the unlogged part changed (tools connected, a longer system prompt: the read is a new size) or the
client changed earlier messages in a way the transcript does not show (the read is the unlogged prefix). The
conversation is split there: the calls from that one on form a new conversation over the same messages, whose
hidden prefix is the size that call read (``meta["hidden_size"]``; a shorter read among its later calls, by rule 1,
is the fixed part) and whose messages hash differently
(``meta["epoch"]``), so they have their own cache entries.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from ._transcript import Conversation, Message

__all__ = [
    "CLAUDE_CODE_COMPACTED_TOKENS",
    "CLAUDE_CODE_CONTEXT_TOKENS",
    "CLAUDE_CODE_SUBAGENT_TOKENS",
    "fit_sizes",
    "hidden_levels",
    "hidden_prefix_size",
    "point_boundary",
    "split_on_prefix_change",
    "unlogged_prefix_tokens",
    "SizeFit",
]

#: Tokens a Claude Code call sends that its transcript never shows — system prompt, tool schemas and the context
#: attached to the first message (CLAUDE.md, environment) — used when the log has no usage to infer it from.
#: Measured as the first call's logged prompt minus its visible messages, on the two Claude Code 2.1 sessions of
#: bench/README.md "Replay: token estimate" (25,876 and 25,963 tokens).
CLAUDE_CODE_CONTEXT_TOKENS = 25_900
#: The same for a Task sub-agent's conversation: the first call's logged prompt minus its visible messages, median
#: of the 8 sub-agents of the shared sessions that log usage (8,833 to 13,686; bench/README.md "Replay: prediction
#: without usage").
CLAUDE_CODE_SUBAGENT_TOKENS = 11_224
#: The same for the conversation after a compaction (its first call's prompt minus the summary and what follows):
#: mean of the two compactions of the shared sessions that log usage (29,235 and 37,453 tokens).
CLAUDE_CODE_COMPACTED_TOKENS = 33_300


def unlogged_prefix_tokens(conv: Conversation) -> int:
    """The assumed size of a Claude Code conversation's unlogged prefix when no usage is logged (rule 3). The
    constants were measured on models of the older tokenizer; a conversation of Claude Opus 4.7 or later (the
    first reply's model) counts them ``promptcache.replay._tokens.NEW_TOKENIZER_FACTOR`` times."""
    from ._tokens import CLAUDE_2026, NEW_TOKENIZER_FACTOR, calibration_for

    known = conv.meta.get("hidden_size")
    if isinstance(known, int):
        return known
    agent = str(conv.meta.get("agent") or "")
    if agent and not agent.startswith("agent-acompact"):
        size = CLAUDE_CODE_SUBAGENT_TOKENS
    elif conv.meta.get("context_start") == "compact_boundary":
        size = CLAUDE_CODE_COMPACTED_TOKENS
    else:
        size = CLAUDE_CODE_CONTEXT_TOKENS
    model = next((m.model for m in conv.messages if m.role == "assistant" and m.model), None)
    return round(size * NEW_TOKENIZER_FACTOR) if model and calibration_for(model) is CLAUDE_2026 else size


class SizeFit:
    """Result of ``fit_sizes``.

    Attributes:
        tokens: fitted tokens per block (same indexing as the input estimate).
        logged_requests: requests whose prompt size came from the log.
        exact_requests: of those, how many the fit reproduces exactly (the others logged a shrinking prompt).
    """

    __slots__ = ("tokens", "logged_requests", "exact_requests")

    def __init__(self, tokens: list[int], logged_requests: int, exact_requests: int) -> None:
        self.tokens, self.logged_requests, self.exact_requests = tokens, logged_requests, exact_requests


def hidden_prefix_size(
    first_prompt: int, first_read: int, visible_estimate: int, later_reads: Sequence[int] = ()
) -> int:
    """The inferred size of the unlogged prefix (rule 1 of the module docstring), tokens >= 0.

    Args:
        first_prompt: the first logged call's prompt tokens (input + cache read + cache write).
        first_read: that call's cache-read tokens.
        visible_estimate: estimated tokens of the messages that call sent.
        later_reads: cache-read tokens of the conversation's later logged calls: a read short of the first prompt
            minus half its visible messages is a prefix of the first prompt that was cached, and the shortest such
            read, over all calls, is the fixed prefix (a call that found only it cached: the rest had expired or
            changed; a longer one was a longer prefix another session had cached, e.g. the same opening message).
    """
    limit = first_prompt - visible_estimate / 2
    reads = [read for read in (first_read, *later_reads) if 0 < read <= limit]
    return min(reads) if reads else max(0, first_prompt - visible_estimate)


def hidden_levels(conv: Conversation, message_tokens: Callable[[Message], int]) -> list[int]:
    """The cached levels of a hidden-prefix conversation's unlogged part (rule 1 of the module docstring): the
    distinct prefix lengths, ascending, that its logged calls read within that part; the last is the part's size.
    ``[]`` when no call logs usage (the size is then ``unlogged_prefix_tokens``).

    Claude Code's system prompt carries more than one cache breakpoint, so traffic the replay does not see (the
    account's other sessions) can keep different lengths of it cached, and a conversation's calls then read
    several lengths of it (bench/README.md "Replay: cache timeline" has a session that reads three). Each length
    is a block boundary of the replay, where the ``as-logged`` layout places a breakpoint and where a read of that
    length seeds the cache (``promptcache.replay._run``).

    Args:
        conv: the conversation (its replies' ``usage``; ``meta["hidden_size"]``, the read where a broken prefix
            split it, stands in for the first call's read).
        message_tokens: estimated tokens of one message (its blocks).
    """
    ends = conv.request_ends()
    logged = [(cut, usage) for cut in ends if (usage := conv.messages[cut].usage) is not None]
    if not logged:
        return []
    cut0, first = logged[0]
    visible = sum(message_tokens(m) for m in conv.messages[:cut0])
    known = conv.meta.get("hidden_size")
    first_read = known if isinstance(known, int) else first.cache_read_tokens
    limit = first.prompt_tokens - visible / 2
    reads = {first_read, *(usage.cache_read_tokens for _, usage in logged[1:])}
    levels = sorted(read for read in reads if 0 < read <= limit)
    return levels or [max(0, first.prompt_tokens - visible)]


def point_boundary(entry: object, layout: tuple[int, int, Sequence[int]], cut: int) -> int:
    """The block boundary of one logged cache point (``promptcache.replay._bedrock_logs`` shape
    ``{"where", "index", "after", "ttl"}``) in a request of ``cut`` messages; 0 when it cannot be placed.

    Args:
        entry: the logged point.
        layout: ``(tools_end, system_end, msg_end)`` of the flattened prompt (``promptcache.replay._prepare``).
        cut: messages in the request.
    """
    tools_end, system_end, msg_end = layout
    if not isinstance(entry, dict):
        return 0
    where, after = entry.get("where"), entry.get("after")
    after = after if isinstance(after, int) and after >= 0 else 0
    if where == "tools":
        return min(after, tools_end)
    if where == "system":
        return min(tools_end + after, system_end)
    index = entry.get("index")
    if where != "message" or not isinstance(index, int) or not 0 <= index < min(cut, len(msg_end)):
        return 0
    start = msg_end[index - 1] if index else system_end
    return min(start + after, msg_end[index])


def _one_hour_end(conv: Conversation, number: int, cut: int, layout: tuple[int, int, Sequence[int]] | None) -> int:
    """Boundary of request ``number``'s last 1-hour cache point (0: none, or no layout)."""
    points = conv.meta.get("cache_points")
    if layout is None or not isinstance(points, list) or number >= len(points) or not points[number]:
        return 0
    ends = [point_boundary(p, layout, cut) for p in points[number] if isinstance(p, dict) and p.get("ttl") == "1h"]
    return max(ends, default=0)


def fit_sizes(
    conv: Conversation,
    estimate: Sequence[int],
    request_ends: Sequence[tuple[int, int]],
    hidden_block: int | None,
    layout: tuple[int, int, Sequence[int]] | None = None,
    levels: Sequence[int] = (),
) -> SizeFit:
    """Fit block sizes to the logged prompt sizes (see the module docstring).

    Args:
        conv: the conversation (its assistant messages' ``usage``).
        estimate: estimated tokens per block of the flattened prompt (``promptcache.replay._prepare``), the hidden
            block (if any) included at 0.
        request_ends: ``(cut, n_blocks)`` per request in order: the request is ``messages[:cut]`` and spans blocks
            ``[0, n_blocks)``; its usage is ``messages[cut].usage``.
        hidden_block: index of the hidden-prefix block, or ``None``.
        layout: ``(tools_end, system_end, msg_end)`` of the flattened prompt, for rule 5 (``None``: no rule 5).
        levels: ``hidden_levels(conv, ...)``: the hidden part is ``len(levels)`` blocks from ``hidden_block`` on,
            ending at those cumulative sizes (empty: one block, sized by ``hidden_prefix_size``).

    Returns:
        A ``SizeFit``; when no request has usage, the estimate unchanged.
    """
    tokens = list(estimate)
    logged = [
        (n, usage, _one_hour_end(conv, number, cut, layout))
        for number, (cut, n) in enumerate(request_ends)
        if (usage := conv.messages[cut].usage) is not None
    ]
    if not logged:
        if hidden_block is not None and conv.meta.get("format") == "claude-code":
            tokens[hidden_block] = unlogged_prefix_tokens(conv)
            compacted = conv.meta.get("compacted_tokens")
            if isinstance(compacted, int) and compacted > tokens[hidden_block]:  # rule 6
                _spread(tokens, hidden_block + 1, len(tokens), compacted - tokens[hidden_block])
        return SizeFit(tokens, 0, 0)
    start = 0
    if hidden_block is not None and levels:
        below = 0
        for k, level in enumerate(levels):
            tokens[hidden_block + k] = level - below
            below = level
        start = hidden_block + len(levels)
    elif hidden_block is not None:
        n0, usage0, _ = logged[0]
        known = conv.meta.get("hidden_size")
        visible = sum(tokens[hidden_block + 1 : n0])
        later = [u.cache_read_tokens for _, u, _ in logged[1:]]
        if isinstance(known, int):  # the read where the prefix broke; a shorter read later is the fixed part
            tokens[hidden_block] = hidden_prefix_size(usage0.prompt_tokens, int(known), visible, later)
        else:
            tokens[hidden_block] = hidden_prefix_size(usage0.prompt_tokens, usage0.cache_read_tokens, visible, later)
        start = hidden_block + 1
    done = start
    total = sum(tokens[:start])
    exact = 0
    for number, (n_blocks, usage, one_hour_end) in enumerate(logged):
        target = usage.prompt_tokens
        read = usage.cache_read_tokens
        pin = read + usage.cache_write_1h_tokens
        if done < one_hour_end < n_blocks and usage.cache_write_1h_tokens and total <= pin < target:
            # rule 5: the 1-hour write ends at the last 1-hour point
            _spread(tokens, done, one_hour_end, pin - total)
            _spread(tokens, one_hour_end, n_blocks, target - pin)
            total, done = target, n_blocks
            exact += 1
            continue
        if number == 0 and total < read < target and n_blocks - done > 1:
            # rule 4: the first call read a longer prefix than the fixed part: make a block boundary end there
            running, split = total, done + 1
            best = abs(total + tokens[done] - read)
            for k in range(done, n_blocks - 1):
                running += tokens[k]
                if abs(running - read) < best:
                    best, split = abs(running - read), k + 1
            _spread(tokens, done, split, read - total)
            _spread(tokens, split, n_blocks, target - read)
            total, done = target, n_blocks
            exact += 1
            continue
        if n_blocks <= done:  # no new block (should not happen: every request adds its last message)
            exact += total == target
            continue
        _spread(tokens, done, n_blocks, max(0, target - total))
        total = sum(tokens[:n_blocks])
        exact += total == target
        done = n_blocks
    return SizeFit(tokens, len(logged), exact)


def _spread(tokens: list[int], start: int, end: int, amount: int) -> None:
    """Set ``tokens[start:end]`` to integers summing to ``amount``, proportional to their current values
    (equal shares when they are all 0), by largest remainder."""
    weights = tokens[start:end]
    total = sum(weights)
    if total <= 0:
        weights = [1] * (end - start)
        total = end - start
    shares = [amount * w / total for w in weights]
    floors = [int(s) for s in shares]
    left = amount - sum(floors)
    order = sorted(range(len(shares)), key=lambda i: floors[i] - shares[i])  # largest remainder first
    for i in order[:left]:
        floors[i] += 1
    tokens[start:end] = floors


def split_on_prefix_change(conv: Conversation, visible_estimate: Sequence[int]) -> list[Conversation]:
    """``conv`` split where its hidden prefix changed (see the module docstring); ``[conv]`` when it did not.

    Args:
        conv: a conversation; only ``meta["hidden_prefix"]`` ones with logged usage can split.
        visible_estimate: estimated tokens of each message (same indexing as ``conv.messages``), for the first
            call's hidden-prefix inference.
    """
    if conv.meta.get("hidden_prefix") is not True:
        return [conv]
    ends = conv.request_ends()
    logged = [(i, cut, usage) for i, cut in enumerate(ends) if (usage := conv.messages[cut].usage)]
    if len(logged) < 2:
        return [conv]
    _, cut0, first = logged[0]
    hidden = conv.meta.get("hidden_size")
    if not isinstance(hidden, int):
        hidden = hidden_prefix_size(first.prompt_tokens, first.cache_read_tokens, sum(visible_estimate[:cut0]))
    prev, prev_at = first, conv.messages[cut0].timestamp
    for i, cut, usage in logged[1:]:
        read = usage.cache_read_tokens
        cached = prev.cache_read_tokens + prev.cache_write_tokens
        at = conv.messages[cut].timestamp
        ttl_s = 3600.0 if prev.cache_write_1h_tokens else 300.0
        unexpired = at is None or prev_at is None or at - prev_at < ttl_s
        if 0 < read < cached and unexpired:
            head = dataclasses.replace(conv, replies=ends[:i])
            meta = {**conv.meta, "hidden_size": read, "epoch": f"{conv.meta.get('epoch', '')}~{i}"}
            tail = dataclasses.replace(conv, id=f"{conv.id}~{i}", replies=ends[i:], meta=meta)
            return [head, *split_on_prefix_change(tail, visible_estimate)]
        prev, prev_at = usage, at
    return [conv]

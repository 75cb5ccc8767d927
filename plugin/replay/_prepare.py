"""Turning conversations into the requests a Bedrock Converse client would send, counted once.

A conversation becomes one flat list of content blocks in prompt order — tools (one block per schema), system
blocks, then message blocks — with cumulative token counts and cumulative prefix hashes. Every request of the
conversation is a prefix of that list (``messages[:i]`` for each assistant turn ``i``), so a request is just a block
count: nothing is re-counted or re-hashed per request.

Messages are grouped the way Converse sees them: tool results travel in ``user`` messages, and consecutive
messages of the same role are merged (Converse requires alternating roles; ``ChatBedrockConverse`` merges them).
A cache point placed "at the end of a message" sits at the block boundary where that group ends.

A conversation whose log leaves out the system prompt and tools (``meta["hidden_prefix"]``, Claude Code) gets
placeholder blocks for them (one per cached level the log shows, ``promptcache.replay._sizes.hidden_levels``),
after the (absent) tools and before any visible system blocks; where requests carry logged usage, every block's size is fitted to the logged prompt sizes (``promptcache.replay._sizes``), so every
strategy is simulated on the real sizes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

from ._sizes import fit_sizes, hidden_levels
from ._tokens import TokenCounter
from ._transcript import Block, Conversation, Usage

__all__ = [
    "Group",
    "RequestGroups",
    "PreparedConversation",
    "Request",
    "assign_times",
    "check_gap_s",
    "prepare",
    "requests_of",
    "schedule",
]


@dataclass(slots=True)
class Group:
    """One Converse message: ``role`` (user/assistant), blocks ``[start, end)`` of the flat list, and flags."""

    role: str
    start: int
    end: int
    has_tool_blocks: bool = False
    ends_with_reasoning: bool = False
    last_kind: str = ""


@dataclass(slots=True)
class PreparedConversation:
    """A conversation as blocks: ``cum[k]`` = tokens of blocks ``[0, k)``; ``hashes[k]`` identifies that prefix.

    Attributes:
        conversation: the source ``Conversation``.
        cum: cumulative tokens, ``len == n_blocks + 1``.
        hashes: prefix hashes (16-byte BLAKE2b chain over role, kind, name, id and text of each block).
        tools_end: boundary after the tool schemas (0 when there are none).
        system_end: boundary after the system prompt (== ``tools_end`` when there is none).
        groups: Converse messages over the whole conversation.
        msg_end: for each source message ``j``, the boundary after it; ``msg_group[j]`` its group index.
        group_tokens: tokens per group (for strategies that reason per message).
    """

    conversation: Conversation
    cum: list[int]
    hashes: list[bytes]
    tools_end: int
    system_end: int
    groups: list[Group]
    msg_end: list[int]
    msg_group: list[int]
    group_tokens: list[int]
    system_text: str = ""
    logged_requests: int = 0  # requests whose prompt size came from logged usage
    hidden_end: int = 0  # boundary after the hidden-prefix placeholders, ``tools_end + 1`` on (0: none)


@dataclass(slots=True)
class Request:
    """One model call of the replay.

    Attributes:
        prepared: its conversation.
        number: 0-based index of the request within the conversation.
        cut: the request is ``messages[:cut]``; ``messages[cut]`` is the recorded reply.
        n_blocks: blocks in the request (``prepared.cum[n_blocks]`` is its input size in tokens).
        time_s: when it is sent, in seconds on the replay clock.
        output_tokens: tokens of the recorded reply.
        groups: Converse messages of this request (the last one cut at the request's end): a `RequestGroups`
            view of the conversation's groups, so a request holds no copy of its history.
    """

    prepared: PreparedConversation
    number: int
    cut: int
    n_blocks: int
    time_s: float = 0.0
    output_tokens: int = 0
    groups: Sequence[Group] = field(default_factory=list)
    is_last: bool = False  # the conversation's final request: for reference bounds only, never for strategies
    timed: bool = False  # its send time comes from a recorded timestamp (else from the gap)
    model: str | None = None  # the model the log names for this call (the reply's ``Message.model``)
    usage: Usage | None = None  # the call's logged usage (the reply's ``Message.usage``)
    next_time_s: float | None = None  # send time of the conversation's next request (hindsight reference only)
    done_s: float | None = None  # when the reply was done, where the log says (``meta["reply_done_s"]``)
    start_s: float | None = None  # when the reply began, where the log says (the reply's timestamp)

    @property
    def input_tokens(self) -> int:
        return self.prepared.cum[self.n_blocks]


def _group_role(role: str) -> str:
    return "assistant" if role == "assistant" else "user"


def prepare(conv: Conversation, counter: TokenCounter) -> PreparedConversation:
    """Flatten, count and hash ``conv`` (see the module docstring)."""
    tokens: list[int] = []
    keys: list[bytes] = []
    for schema in conv.tools:
        tokens.append(counter.tool_schema(schema))
        keys.append(b"tool\x00" + repr(sorted(schema.items())).encode())
    tools_end = len(tokens)
    hidden = conv.meta.get("hidden_prefix") is True
    levels = hidden_levels(conv, lambda m: sum(counter.block(b) for b in m.blocks)) if hidden else []
    n_hidden = max(1, len(levels)) if hidden else 0
    tokens.extend([0] * n_hidden)  # sized by fit_sizes (or stays 0 without usage: nothing is known about it)
    keys.extend([b""] * n_hidden)
    for block in conv.system:
        tokens.append(counter.block(block))
        keys.append(_key("system", True, block))
    system_end = len(tokens)
    groups: list[Group] = []
    msg_end: list[int] = []
    msg_group: list[int] = []
    for message in conv.messages:
        role = _group_role(message.role)
        if not groups or groups[-1].role != role:
            groups.append(Group(role, len(tokens), len(tokens)))
        group = groups[-1]
        # a message without content still occupies a place in the prompt: one empty block, so it has a boundary
        for i, block in enumerate(message.blocks or _EMPTY):
            tokens.append(counter.block(block))
            keys.append(_key(role, group.end == group.start and i == 0, block))
            group.end = len(tokens)
            group.has_tool_blocks |= block.kind in ("tool_use", "tool_result")
            group.ends_with_reasoning = block.kind == "reasoning"
            group.last_kind = block.kind
        msg_end.append(len(tokens))
        msg_group.append(len(groups) - 1)
    ends = [(cut, msg_end[cut - 1]) for cut in conv.request_ends()]
    fit = fit_sizes(conv, tokens, ends, tools_end if hidden else None, (tools_end, system_end, msg_end), levels)
    tokens = fit.tokens
    hidden_end = tools_end + n_hidden
    if hidden:  # conversations with the same unlogged prefix share its cache entries: keyed by each level's size
        level = 0
        for k in range(tools_end, hidden_end):
            level += tokens[k]
            keys[k] = f"hidden\x00{conv.meta.get('hidden_key', '')}\x00{level}".encode()
        if conv.meta.get("epoch") and len(keys) > hidden_end:  # content changed unseen (sizes.split_on_prefix_change)
            keys[hidden_end] += f"\x00epoch{conv.meta['epoch']}".encode()
    cum = [0] * (len(tokens) + 1)
    hashes = [b""] * (len(tokens) + 1)
    running, h = 0, b"promptcache-replay"
    for k, (n, key) in enumerate(zip(tokens, keys), start=1):
        running += n
        cum[k] = running
        h = hashlib.blake2b(h + key, digest_size=16).digest()
        hashes[k] = h
    group_tokens = [cum[g.end] - cum[g.start] for g in groups]
    return PreparedConversation(
        conv,
        cum,
        hashes,
        tools_end,
        system_end,
        groups,
        msg_end,
        msg_group,
        group_tokens,
        "\n".join(b.text for b in conv.system),
        fit.logged_requests,
        hidden_end,
    )


_EMPTY = (Block("text", ""),)


def _key(role: str, starts_message: bool, block: Block) -> bytes:
    return "\x00".join(
        (
            role,
            "1" if starts_message else "0",
            block.kind,
            block.name,
            block.id,
            "E" if block.is_error else "",
            block.text,
        )
    ).encode()


def requests_of(prepared: PreparedConversation, counter: TokenCounter) -> list[Request]:
    """The requests of one prepared conversation (times not yet assigned)."""
    conv = prepared.conversation
    out: list[Request] = []
    ends = conv.request_ends()
    done = conv.meta.get("reply_done_s")
    done = done if isinstance(done, dict) else {}
    for number, cut in enumerate(ends):
        last = prepared.msg_group[cut - 1]
        tail = prepared.groups[last]
        if tail.end != prepared.msg_end[cut - 1]:  # a group the request cuts (two same-role messages in a row)
            kinds = _last_kind(conv, cut)
            tail = Group(
                tail.role,
                tail.start,
                prepared.msg_end[cut - 1],
                tail.has_tool_blocks,
                kinds == ["reasoning"],
                kinds[0] if kinds else "",
            )
        groups = RequestGroups(prepared.groups, last, tail)
        reply = conv.messages[cut]
        out.append(
            Request(
                prepared,
                number,
                cut,
                prepared.msg_end[cut - 1],
                output_tokens=(
                    reply.usage.output_tokens
                    if reply.usage is not None
                    else sum(counter.block(b) for b in reply.blocks)
                ),
                groups=groups,
                is_last=number == len(ends) - 1,
                model=reply.model,
                usage=reply.usage,
                done_s=done.get(cut),
                start_s=reply.timestamp if done else None,
            )
        )
    return out


def _last_kind(conv: Conversation, cut: int) -> list[str]:
    """``[kind]`` of the last block of ``messages[:cut]`` (``[]`` when they hold no block), read from the end."""
    for j in range(cut - 1, -1, -1):
        blocks = conv.messages[j].blocks
        if blocks:
            return [blocks[-1].kind]
    return []


class RequestGroups(Sequence[Group]):
    """The Converse messages of one request without copying them: the conversation's groups ``groups[:count]``
    followed by ``tail`` (the request's last group, cut at its end). Reads like the list ``[*groups[:count], tail]``
    (``len``, indexing from either end, slices, iteration, ``==`` with a list)."""

    __slots__ = ("_groups", "_count", "_tail")

    def __init__(self, groups: list[Group], count: int, tail: Group) -> None:
        self._groups, self._count, self._tail = groups, count, tail

    def __len__(self) -> int:
        return self._count + 1

    @overload
    def __getitem__(self, index: int) -> Group: ...

    @overload
    def __getitem__(self, index: slice) -> list[Group]: ...

    def __getitem__(self, index: int | slice) -> Group | list[Group]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count + 1))]
        if index < 0:
            index += self._count + 1
        if index == self._count:
            return self._tail
        if not 0 <= index < self._count:
            raise IndexError("request group index out of range")
        return self._groups[index]

    def __iter__(self) -> Iterator[Group]:
        for i in range(self._count):
            yield self._groups[i]
        yield self._tail

    def __reversed__(self) -> Iterator[Group]:
        yield self._tail
        for i in range(self._count - 1, -1, -1):
            yield self._groups[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (RequestGroups, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # compared by content, like the list it stands for

    def __repr__(self) -> str:
        return f"RequestGroups({list(self)!r})"


def check_gap_s(gap_s: float) -> None:
    """Raises ``ValueError`` unless ``gap_s`` is a finite number of seconds >= 0."""
    if not (gap_s >= 0 and gap_s != float("inf")):
        raise ValueError(f"gap_s must be a finite number of seconds >= 0, got {gap_s!r}")


def schedule(per_conversation: list[list[Request]], gap_s: float) -> list[Request]:
    """Assign send times and return all requests in time order (ties keep input order).

    A request takes the recorded timestamp of its last message (else of its reply); without one it comes
    ``gap_s`` seconds after the previous request of its conversation. A conversation without any timestamp starts
    ``gap_s`` after the latest request scheduled so far, so untimed files replay one conversation after another.

    Raises:
        ValueError: ``gap_s`` negative or not finite.
    """
    check_gap_s(gap_s)
    clock_end = 0.0
    ordered: list[tuple[float, int, Request]] = []
    for reqs in per_conversation:
        clock_end = assign_times(reqs, gap_s, clock_end)
        base = len(ordered)
        ordered.extend((req.time_s, base + i, req) for i, req in enumerate(reqs))
    ordered.sort(key=lambda item: (item[0], item[1]))
    return [req for _, _, req in ordered]


def assign_times(reqs: list[Request], gap_s: float, clock_end: float) -> float:
    """Set ``time_s``, ``timed`` and ``next_time_s`` on one conversation's requests (rules of ``schedule``);
    ``clock_end`` is the latest send time scheduled so far. Returns the new latest send time."""
    prev: float | None = None
    reqs_prev: Request | None = None
    for req in reqs:
        messages = req.prepared.conversation.messages
        stamp = messages[req.cut - 1].timestamp
        if stamp is None:
            stamp = messages[req.cut].timestamp
        req.timed = stamp is not None
        if stamp is None:
            stamp = (clock_end + gap_s) if prev is None else prev + gap_s
        if reqs_prev is not None:
            reqs_prev.next_time_s = stamp
        reqs_prev = req
        req.time_s = prev = stamp
        clock_end = max(clock_end, stamp)
    return clock_end

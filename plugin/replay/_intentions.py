"""What the intention cache would have answered on the replayed traffic, measured with the real library.

Every recorded tool call is replayed in time order through a real `IntentionMemory`
(in-memory backend, its default similarity, threshold and margin; its clock is the replay clock, so memories expire
after ``ttl_s`` seconds of replayed time) and a real `IntentionCache` with
``serve_repeats=True``:

1. **retrieve_memory.** Before the call, the memory is asked what the ``retrieve_memory`` tool would answer for the
   call's intention (what ``IntentionCache`` files it under, `current_intention`: the
   call's ``intention`` argument, else the latest human message so far): ``IntentionMemory.retrieve_all(user,
   intention)``, of which the tool lists the `DEFAULT_MAX_RESULTS` most recent. An
   answer is **right** when it lists a result of the call the agent actually made (same tool and arguments,
   volatile ones left out), **wrong** when it lists only other calls' results. A right answer is also **stale**
   when that listed result differs from what the tool returned this time (the world changed in between).
2. **serve_repeats.** The recorded result then goes through ``IntentionCache.wrap_tool_call`` as a ``ToolMessage``.
   When the processor answers from memory (same user, exact intention, same tool and arguments, not expired) the
   recorded tool is not "run" and nothing is stored: a **served repeat** (always the same call; stale when the
   served content differs from the recorded result). Otherwise the result is stored exactly when the processor
   would store it: not for errors, not for side-effecting tools (``DEFAULT_SIDE_EFFECT_PREFIXES``: ``send_``,
   ``update_``, ``book_``, ``cancel_``, ``transfer_``, ...), volatile arguments left out. A recorded result without
   an error flag whose text starts with "error" counts as an error (``status="error"``), which is what a LangChain
   ``ToolNode`` reports for a tool that raised; OpenAI transcripts do not record the flag.

The user is the conversation's family (the recorded user id, else the task / conversation id), passed as
``configurable["user_id"]``. Calls of one assistant message are all looked up before any of them runs (the model
chose them together). Anthropic tool results (``tool_result`` blocks in a user message) become ``ToolMessage``
objects, as they are in a LangChain agent's state, so they never count as the human's message.

Also counted, for comparison: ``same_call_repeats``, tool calls whose tool and arguments (canonical JSON, volatile
arguments left out) an earlier non-error call of the same user to a storable tool already had, at any distance and
under any intention, i.e. what a cache keyed by the call alone could answer at best.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

import orjson
from langchain.agents.middleware import ToolCallRequest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from promptcache._keys import canonical_json
from promptcache.intention import IntentionCache, IntentionMatch, IntentionMemory
from promptcache.intention._middleware import current_intention
from promptcache.intention._tool import DEFAULT_MAX_RESULTS

from ._prepare import Request
from ._transcript import Block, Conversation, Message

__all__ = ["IntentionReplay", "IntentionStats", "agent_messages", "is_error_result"]


@dataclass
class IntentionStats:
    """Intention-cache figures of a replay (counts of tool calls).

    Attributes:
        tool_calls: all recorded tool calls.
        looked_up: calls with an intention to look up (a blank one cannot be looked up or stored).
        exact / similar: calls ``retrieve_memory`` answered through an exact / a similar intention match.
        wrong_exact / wrong_similar: of those, answers that do not list the actual call's result (only other
            calls'); the rest are right.
        right_stale: right answers whose listed result for the call differs from what the tool returned.
        listed_results: results listed over all answers (a ``retrieve_memory`` answer lists every result of the
            matched intention, up to ``DEFAULT_MAX_RESULTS``).
        served: calls ``IntentionCache(serve_repeats=True)`` answered from memory without running the tool.
        served_stale: of those, answers whose content differs from what the tool returned.
        stored: results the ``IntentionCache`` stored.
        same_call_repeats: calls repeating an earlier non-error call of the same user to a storable tool (same tool,
            same arguments); see the module docstring.
        same_call_repeats_changed: of those, calls whose result differs from the previous result of that call (a
            cache keyed by the call alone would have served a stale result).
        users: distinct users (families).
        ttl_s / threshold / margin / similarity: the ``IntentionMemory`` settings used.
    """

    tool_calls: int = 0
    looked_up: int = 0
    exact: int = 0
    similar: int = 0
    wrong_exact: int = 0
    wrong_similar: int = 0
    right_stale: int = 0
    listed_results: int = 0
    served: int = 0
    served_stale: int = 0
    stored: int = 0
    same_call_repeats: int = 0
    same_call_repeats_changed: int = 0
    users: int = 0
    ttl_s: float = 0.0
    threshold: float = 0.0
    margin: float = 0.0
    similarity: str = ""

    @property
    def answered(self) -> int:
        """Calls ``retrieve_memory`` answered (exact + similar, right or wrong)."""
        return self.exact + self.similar

    @property
    def wrong(self) -> int:
        """Answers that do not list the actual call's result."""
        return self.wrong_exact + self.wrong_similar

    @property
    def right(self) -> int:
        """Answers that list the actual call's result (same tool and arguments)."""
        return self.answered - self.wrong

    @property
    def families(self) -> int:
        """Alias of ``users`` (the name of earlier versions)."""
        return self.users


def is_error_result(block: Block) -> bool:
    """Whether a recorded ``tool_result`` block is an error: flagged, or its text starts with "error"."""
    return block.is_error or block.text.lstrip().lower().startswith("error")


def _text(message: Message) -> str:
    return "\n".join(b.text for b in message.blocks if b.kind in ("text", "reasoning", "image"))


def _args(block: Block) -> dict[str, Any]:
    try:
        args = orjson.loads(block.text) if block.text else {}
    except orjson.JSONDecodeError:
        return {"__raw__": block.text}
    return args if isinstance(args, dict) else {"value": args}


def agent_messages(conv: Conversation) -> tuple[list[BaseMessage], list[int]]:
    """The conversation as a LangChain agent's state would hold it, and where each source message ends.

    Returns:
        ``(messages, ends)``: ``messages[:ends[j]]`` is the state after source message ``j``. Tool results are
        ``ToolMessage`` objects (one per result; an Anthropic user message holding results and text becomes the
        results followed by a ``HumanMessage`` of the text).
    """
    out: list[BaseMessage] = [SystemMessage("\n".join(b.text for b in conv.system))] if conv.system else []
    ends: list[int] = []
    for message in conv.messages:
        text = _text(message)
        if message.role == "assistant":
            calls = [
                {"name": b.name, "args": _args(b), "id": b.id or None, "type": "tool_call"}
                for b in message.blocks
                if b.kind == "tool_use"
            ]
            out.append(AIMessage(content=text, tool_calls=calls))
        else:
            results = [b for b in message.blocks if b.kind == "tool_result"]
            for b in results:
                out.append(
                    ToolMessage(
                        content=b.text,
                        tool_call_id=b.id or "",
                        name=b.name or None,
                        status="error" if is_error_result(b) else "success",
                    )
                )
            if text or not results:
                out.append(HumanMessage(content=text))
        ends.append(len(out))
    return out, ends


def _pair_results(conv: Conversation) -> dict[tuple[int, int], Block]:
    """Each tool call's recorded result: ``(message index, index among its message's calls) -> result block``.

    A result answers the latest earlier call with its id that has no result yet, so ids reused from turn to turn
    (``call_0`` on every turn, as some OpenAI-compatible servers write them) pair each result with its own call.
    """
    open_calls: dict[str, list[tuple[int, int]]] = {}
    out: dict[tuple[int, int], Block] = {}
    for i, message in enumerate(conv.messages):
        calls = 0
        for block in message.blocks:
            if block.kind == "tool_use":
                if block.id:
                    open_calls.setdefault(block.id, []).append((i, calls))
                calls += 1
            elif block.kind == "tool_result" and block.id and open_calls.get(block.id):
                out[open_calls[block.id].pop()] = block
    return out


class IntentionReplay:
    """Feeds the tool calls of replayed requests, in time order, through ``IntentionMemory`` and ``IntentionCache``.

    Args:
        memory: the memory to use (default: a new in-memory ``IntentionMemory`` with the library defaults). It is
            dedicated to the replay: its ``clock`` becomes the replay clock and its ``store`` is wrapped to count
            the writes.
        cache: the processor that stores (and serves) results (default: ``IntentionCache(memory,
            serve_repeats=True)`` with its default deny list); when given, its ``memory`` is used.
        max_results: results a ``retrieve_memory`` answer lists (default: the tool's, ``DEFAULT_MAX_RESULTS``).
    """

    def __init__(
        self,
        memory: IntentionMemory | None = None,
        cache: IntentionCache | None = None,
        max_results: int = DEFAULT_MAX_RESULTS,
    ) -> None:
        self._now = 0.0
        if cache is not None:
            memory = cache.memory
        self.memory = memory if memory is not None else IntentionMemory()
        self.memory.clock = lambda: self._now
        self.cache = cache if cache is not None else IntentionCache(self.memory, serve_repeats=True)
        self.max_results = max_results
        store = self.memory.store

        def counted_store(*args: Any, **kwargs: Any) -> bool:  # count what the processor really writes
            written = store(*args, **kwargs)
            self.stats.stored += bool(written)
            return written

        self.memory.store = counted_store  # type: ignore[method-assign]  # this replay's own memory, counted
        self.stats = IntentionStats(
            ttl_s=self.memory.ttl_s,
            threshold=self.memory.threshold,
            margin=self.memory.margin,
            similarity=self.memory.similarity.name,
        )
        # conversation id -> (latest HumanMessage of the agent state after each source message, the results)
        self._state: dict[str, tuple[list[HumanMessage | None], dict[tuple[int, int], Block]]] = {}
        self._users: set[str] = set()
        self._seen_calls: dict[tuple[str, str, bytes], str] = {}  # -> the call's latest result text

    def _conversation(self, conv: Conversation) -> tuple[list[HumanMessage | None], dict[tuple[int, int], Block]]:
        """What the replay reads of a conversation's agent state (``agent_messages``): the latest ``HumanMessage``
        of ``messages[: ends[j]]`` for each source message ``j`` (``None``: none yet), and each call's result. Only
        the human messages are built: the processor reads nothing else of the state (``current_intention``)."""
        state = self._state.get(conv.id)
        if state is None:
            humans: list[HumanMessage | None] = []
            latest: HumanMessage | None = None
            for message in conv.messages:  # as agent_messages: a HumanMessage where it adds one
                if message.role != "assistant":
                    text = _text(message)
                    if text or not any(b.kind == "tool_result" for b in message.blocks):
                        latest = HumanMessage(content=text)
                humans.append(latest)
            state = self._state[conv.id] = (humans, _pair_results(conv))
        return state

    def forget(self, conversation_id: str) -> None:
        """Drop the messages kept for a finished conversation."""
        self._state.pop(conversation_id, None)

    def feed(self, request: Request) -> None:
        """Replay the tool calls of ``request``'s recorded reply at ``request.time_s`` (seconds, replay clock)."""
        conv = request.prepared.conversation
        calls = conv.messages[request.cut].tool_calls()
        if not calls:
            return
        self._now = request.time_s
        humans, results = self._conversation(conv)
        user = conv.family
        self._users.add(user)
        self.stats.users = len(self._users)
        # the state when the tools run is messages[: ends[request.cut]] (up to the reply with the calls); all the
        # processor reads of it is the latest HumanMessage (``current_intention``), so that message stands for it
        latest = humans[request.cut]
        history: list[BaseMessage] = [latest] if latest is not None else []
        for j, block in enumerate(calls):
            self._look_up(user, block, history, results.get((request.cut, j)))
        config = {"configurable": {"user_id": user}}
        for j, block in enumerate(calls):
            self._run(user, block, results.get((request.cut, j)), history, config)

    def _look_up(self, user: str, block: Block, history: list[BaseMessage], result: Block | None) -> None:
        stats = self.stats
        stats.tool_calls += 1
        args = self.cache.kept_args(_args(block))
        key = canonical_json(args)
        previous = self._seen_calls.get((user, block.name, key))
        if previous is not None:
            stats.same_call_repeats += 1
            stats.same_call_repeats_changed += result is not None and result.text != previous
        intention = current_intention(_args(block), history, self.cache.intention_arg)
        if intention is None:
            return
        stats.looked_up += 1
        listed = _most_recent(self.memory, user, intention, self.max_results)
        if not listed:
            return
        stats.listed_results += len(listed)
        own = next((m for m in listed if m.tool == block.name and canonical_json(m.args) == key), None)
        wrong = own is None
        if listed[0].kind == "exact":
            stats.exact += 1
            stats.wrong_exact += wrong
        else:
            stats.similar += 1
            stats.wrong_similar += wrong
        if own is not None and result is not None and _content(own) != result.text:
            stats.right_stale += 1

    def _run(
        self, user: str, block: Block, result: Block | None, history: list[BaseMessage], config: dict[str, Any]
    ) -> None:
        if result is None:  # the recording ends before the tool answered
            return
        error = is_error_result(result)
        message = ToolMessage(
            content=result.text, tool_call_id=block.id or "", name=block.name, status="error" if error else "success"
        )
        call: dict[str, Any] = {"name": block.name, "args": _args(block), "id": block.id or None, "type": "tool_call"}
        request = SimpleNamespace(
            tool_call=call, tool=None, state={"messages": history}, runtime=SimpleNamespace(config=config)
        )
        ran: list[bool] = []

        def tool(_request: Any) -> ToolMessage:
            ran.append(True)
            return message

        # A stand-in request (the fields the cache reads); the stand-in tool gives a ToolMessage, so does the cache.
        answer = cast(ToolMessage, self.cache.wrap_tool_call(cast(ToolCallRequest, request), tool))
        if not ran:
            self.stats.served += 1
            self.stats.served_stale += answer.content != result.text
        if not error and self.cache.should_store(block.name):
            self._seen_calls[(user, block.name, canonical_json(self.cache.kept_args(call["args"])))] = result.text


def _content(match: IntentionMatch) -> str:
    """A stored ``ToolMessage`` content as the text the tool returned (a string as is, else JSON)."""
    return match.result if isinstance(match.result, str) else match.result_text()


def _most_recent(memory: Any, user: str, intention: str, count: int) -> list[IntentionMatch]:
    """``memory.retrieve_all(user, intention)[:count]``, what the ``retrieve_memory`` tool lists, reading only the
    memories it lists: the most recent first, skipping (as ``retrieve_all`` does) any whose result expired or
    is corrupt. ``retrieve_all`` reads every memory of the intention, which makes a long session's lookups cost
    the square of its tool calls."""
    from promptcache.intention._lookup import find
    from promptcache.intention._results import to_matches

    picked, now = find(memory, user, intention, None, None, False)
    if picked is None:
        return []
    group, known = picked.group, picked.results or {}
    out: list[IntentionMatch] = []
    for start in range(0, len(group), max(count, 1)):
        if len(out) >= count:
            break
        chunk = group[start : start + max(count, 1)]
        if all(r.result_hash in known for r in chunk):
            raws = [known[r.result_hash] for r in chunk]
        else:
            raws = memory.backend.results(user, [r.result_hash for r in chunk])
        out.extend(to_matches(chunk, picked, raws, now))
    return out[:count]

"""What the ResponseCache and the intention cache would have answered on the replayed traffic.

- Response cache: a request is a hit when the key the real ``ResponseCache`` builds for it
  (``promptcache.response_cache.build_response_cache_key``, scoped by the recorded user id as the processor's
  ``configurable["user_id"]`` fallback would) was stored by an earlier request less than the cache's TTL ago
  (default ``DEFAULT_RESPONSE_CACHE_TTL_SECONDS``). The key covers agent id, scope, model, step number,
  system prompt, messages (content, tool calls, tool results) and tools, so only exact repeats hit.
- Intention cache: the real ``IntentionMemory`` and ``IntentionCache`` replayed call by call
  (``promptcache.replay._intentions``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from promptcache._message_digests import forget_prefix

from ._intentions import IntentionReplay, IntentionStats
from ._prepare import Request
from ._transcript import Block, Conversation, Message

__all__ = ["RepeatCounter", "ResponseCacheStats", "IntentionStats", "response_cache_key", "lc_messages"]

DEFAULT_AGENT_ID = "promptcache-response-cache"


def _default_ttl() -> float:
    from promptcache.response_cache import DEFAULT_RESPONSE_CACHE_TTL_SECONDS

    return float(DEFAULT_RESPONSE_CACHE_TTL_SECONDS)


def lc_messages(conv: Conversation) -> list[BaseMessage]:
    """The conversation's messages as LangChain messages (system first, when present)."""
    out: list[BaseMessage] = []
    if conv.system:
        out.append(SystemMessage("\n".join(b.text for b in conv.system)))
    for message in conv.messages:
        out.append(_lc(message))
    return out


def _lc(message: Message) -> BaseMessage:
    text = "\n".join(b.text for b in message.blocks if b.kind in ("text", "reasoning", "image"))
    if message.role == "assistant":
        import orjson

        calls = []
        for b in message.blocks:
            if b.kind != "tool_use":
                continue
            try:
                args = orjson.loads(b.text)
            except orjson.JSONDecodeError:
                args = {"__raw__": b.text}
            calls.append(
                {
                    "name": b.name,
                    "args": args if isinstance(args, dict) else {"value": args},
                    "id": b.id or None,
                    "type": "tool_call",
                }
            )
        return AIMessage(content=text, tool_calls=calls)
    results = [b for b in message.blocks if b.kind == "tool_result"]
    if message.role == "tool" and results:
        return ToolMessage(
            content=results[0].text,
            tool_call_id=results[0].id or "",
            status="error" if results[0].is_error else "success",
        )
    if results:  # Anthropic: tool results inside a user message
        content: list[str | dict[Any, Any]] = [
            {"type": "tool_result", "tool_use_id": b.id, "content": b.text} for b in results
        ]
        return HumanMessage(content=content + ([{"type": "text", "text": text}] if text else []))
    return HumanMessage(content=text)


def response_cache_key(
    prompt: list[BaseMessage],
    model_id: str,
    agent_id: str = DEFAULT_AGENT_ID,
    scope: str | None = None,
    tools: list[dict[str, Any]] | None = None,
) -> str:
    """The key the real ``ResponseCache`` would build for ``prompt`` sent to ``model_id`` (its default key).

    Calls ``promptcache.response_cache.build_response_cache_key`` with the step number the processor computes. The
    model identity is ``{"provider": "amazon_bedrock_converse", "model_id": model_id, "llm_string": ...}``: a live
    ``ChatBedrockConverse`` would add its constructor arguments to ``llm_string``, which are the same for every
    replayed request, so the hits are the same.

    Raises:
        TypeError / ValueError: a bad ``agent_id`` (`promptcache._config.validate_key_part`).
    """
    from promptcache._config import validate_key_part
    from promptcache.response_cache import ResponseCacheKeyInputs, build_response_cache_key
    from promptcache.response_cache._keys import step_number

    validate_key_part(agent_id, "agent_id")

    model = {"provider": "amazon_bedrock_converse", "model_id": model_id, "llm_string": f"replay:{model_id}"}
    inputs = ResponseCacheKeyInputs(
        agent_id=agent_id,
        scope=scope,
        model=model,
        prompt=prompt,
        step_number=step_number(prompt),
        tools=list(tools or ()),
    )
    return build_response_cache_key(inputs)


@dataclass
class ResponseCacheStats:
    """``hits``: requests answered by the ResponseCache (key stored < ``ttl_s`` ago); ``repeats``: requests whose
    key was seen before at any distance; ``hit_requests``: ids ``(conversation id, request number)`` of the hits."""

    requests: int = 0
    hits: int = 0
    repeats: int = 0
    ttl_s: float = 300.0
    hit_requests: set[tuple[str, int]] = field(default_factory=set)


class _KeyedConversation:
    """One conversation's ResponseCache keys, built as its prompt grows: each message's digest is hashed into a
    running SHA-256 once (`promptcache.response_cache._keys.key_frame`), and a request's key is a copy of that hash
    finished with the request's step number: the key ``response_cache_key`` gives, without hashing the whole digest
    list again on every request of a long conversation."""

    __slots__ = ("messages", "digests", "steps", "hasher", "at", "before", "afters", "namespace", "frame")

    def __init__(
        self, conv: Conversation, model_id: str, scope: str | None, messages: list[BaseMessage] | None = None
    ) -> None:
        from promptcache._message_digests import message_digests
        from promptcache.response_cache._keys import key_frame, key_namespace

        self.messages = lc_messages(conv) if messages is None else messages
        self.digests = message_digests(self.messages)  # a message's digest is the same in every prompt holding it
        steps, step = [0], 0
        for message in self.messages:  # steps[k]: step_number(messages[:k])
            if isinstance(message, HumanMessage):
                step = 0
            elif isinstance(message, AIMessage):
                step += 1
            steps.append(step)
        self.steps = steps
        model = {"provider": "amazon_bedrock_converse", "model_id": model_id, "llm_string": f"replay:{model_id}"}
        tools = list(conv.tools or ())

        def frame(step: int) -> tuple[bytes, bytes]:
            return key_frame(DEFAULT_AGENT_ID, scope, model, step, tools)

        self.frame = frame
        self.before = frame(0)[0] + b"["
        self.afters: dict[int, bytes] = {}
        self.namespace = key_namespace(DEFAULT_AGENT_ID, scope)
        self.hasher = hashlib.sha256(self.before)
        self.at = 0  # digests hashed into ``hasher``

    def key(self, length: int) -> str:
        """The key of the prompt ``messages[:length]``."""
        if length < self.at:  # a shorter prompt than the last one (not seen in replay order): start again
            self.hasher, self.at = hashlib.sha256(self.before), 0
        hasher, digests = self.hasher, self.digests
        for i in range(self.at, length):
            hasher.update((b',"' if i else b'"') + digests[i] + b'"')
        self.at = max(self.at, length)
        step = self.steps[length]
        after = self.afters.get(step)
        if after is None:
            after = self.afters[step] = self.frame(step)[1]
        done = hasher.copy()
        done.update(b"]" + after)
        return f"{self.namespace}:{done.hexdigest()[:32]}"


@dataclass
class _Built:
    """A conversation's source messages and system blocks and the LangChain messages made of them."""

    id: str
    source: list[Message]
    system: tuple[Block, ...] | list[Block]
    lc: list[BaseMessage]


def _shared_lc(conv: Conversation, last: _Built | None) -> list[BaseMessage]:
    """``lc_messages(conv)``, taking the LangChain messages of the leading source messages ``conv`` shares (the
    very same objects, with the same system prompt) with the conversation keyed last: a rewind, a compaction's
    summary call or a log read in reverse starts a conversation that repeats another's history, and the shared
    messages keep their digests in ``message_digests``' prefix memo instead of being built and digested again."""
    if last is None or not (conv.system is last.system or conv.system == last.system):
        return lc_messages(conv)
    source, messages = last.source, conv.messages
    shared, limit = 0, min(len(source), len(messages))
    while shared < limit and messages[shared] is source[shared]:
        shared += 1
    if not shared:
        return lc_messages(conv)
    offset = 1 if conv.system else 0
    return [*last.lc[: offset + shared], *(_lc(m) for m in messages[shared:])]


def _forget_unshared(old: list[BaseMessage], new: list[BaseMessage]) -> None:
    """``forget_prefix(old)`` unless ``new`` starts with the same two objects (the memo entry is then ``new``'s)."""
    if old and not (len(old) >= 2 and len(new) >= 2 and old[0] is new[0] and old[1] is new[1]):
        forget_prefix(old)


class RepeatCounter:
    """Feeds requests in replay order; counts ResponseCache hits and intention-cache answers (``intention``).

    Args:
        model_id: the model the keys are built for.
        ttl_s: ResponseCache entry lifetime in seconds (default: the ResponseCache default).
    """

    def __init__(self, model_id: str, ttl_s: float | None = None) -> None:
        self.model_id = model_id
        self.response = ResponseCacheStats(ttl_s=_default_ttl() if ttl_s is None else float(ttl_s))
        self._intentions = IntentionReplay()
        self.intention: IntentionStats = self._intentions.stats
        self._keys: dict[str, float] = {}
        self._lc: dict[str, _KeyedConversation] = {}
        self._last: _Built | None = None  # the conversation keyed last, whose LangChain messages the next may share

    def _conversation(self, conv: Conversation) -> _KeyedConversation:
        keyed = self._lc.get(conv.id)
        if keyed is None:
            scope = conv.family[len("user:") :] if conv.family.startswith("user:") else None  # configurable user_id
            messages = _shared_lc(conv, self._last)
            keyed = self._lc[conv.id] = _KeyedConversation(conv, self.model_id, scope, messages)
            last, self._last = self._last, _Built(conv.id, conv.messages, conv.system, keyed.messages)
            if last is not None and last.id not in self._lc:  # finished: its prefix memo goes, unless now ours
                _forget_unshared(last.lc, keyed.messages)
        return keyed

    def forget(self, conversation_id: str) -> None:
        """Drop the messages kept for a finished conversation (its ResponseCache keys and memories stay); those of
        the conversation keyed last stay until the next one is keyed, which may start with the same messages."""
        keyed = self._lc.pop(conversation_id, None)
        if keyed is not None and keyed.messages and (self._last is None or self._last.id != conversation_id):
            forget_prefix(keyed.messages)
        self._intentions.forget(conversation_id)

    def finish(self) -> None:
        """Release what is kept once the replay is over (the last conversation's messages and prefix memo)."""
        last, self._last = self._last, None
        if last is not None and last.id not in self._lc and last.lc:
            forget_prefix(last.lc)

    def feed(self, request: Request) -> bool:
        """Account one request (in time order). Returns True when the ResponseCache would answer it."""
        conv = request.prepared.conversation
        keyed = self._conversation(conv)
        key = keyed.key((1 if conv.system else 0) + request.cut)
        stats = self.response
        stats.requests += 1
        stored = self._keys.get(key)
        hit = False
        if stored is not None:
            stats.repeats += 1
            if request.time_s - stored < stats.ttl_s:
                hit = True
                stats.hits += 1
                stats.hit_requests.add((conv.id, request.number))
        if not hit:
            self._keys[key] = request.time_s  # a miss calls the model and stores the reply
        self._intentions.feed(request)
        return hit

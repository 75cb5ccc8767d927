"""Response-cache keys: what a key is made of (`ResponseCacheKeyInputs`) and how it is hashed.

Key format (docs/architecture.md, "ResponseCache"): ``response:{agent_id}[:{sha256(scope)[:8]}]:{sha256(payload)[:32]}``,
where ``payload`` is the canonical JSON (`promptcache._keys`) of every input that changes the reply: agent
id, step number, scope, model identity and invocation parameters (``BaseChatModel._get_llm_string()``, the string
LangChain's own ``BaseCache`` keys on), the model settings of the request, the prompt (system message included),
tool schemas, tool choice and response format. Mastra keys on the prompt and model only; a new tool schema or
temperature must miss, so ours does not stop there.

The prompt enters the payload as the list of its messages' SHA-256 digests (each over the message's canonical
JSON, `promptcache._message_digests`), and the tools as the SHA-256 of their canonical JSON, not as the values
themselves: the same bytes decide the key, but a message or tool list is serialised and hashed once, not on every
call that resends it (key version 2; version 1 hashed the whole JSON, so its entries simply miss). Digests are
cut to 128 bits, the size of the key's own digest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from typing import Final

import orjson
from langchain.agents.middleware import ModelRequest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from promptcache._keys import canonical_json
from promptcache._message_digests import message_digests, prompt_digest_json
from promptcache._tool_keys import canonical_tool, canonical_tools
from promptcache.response_cache._model_identity import model_identity
from promptcache.response_cache._steady import identity_parts as steady_identity_parts
from promptcache.response_cache._steady import tools_part
from promptcache.response_cache._tools_digest import tools_digest

__all__ = [
    "DEFAULT_AGENT_ID",
    "KEY_PREFIX",
    "ResponseCacheKeyInputs",
    "build_response_cache_key",
    "custom_key",
    "describe_response_format",
    "inputs_from_request",
    "key_frame",
    "key_namespace",
    "model_identity",
    "request_key",
    "step_number",
]

DEFAULT_AGENT_ID: Final = "promptcache-response-cache"
"""Default ``agent_id`` (Mastra's is ``'mastra-response-cache'``)."""

KEY_PREFIX: Final = "response"
"""First segment of every response-cache key."""

_KEY_VERSION: Final = 2  # bump when the payload layout changes, so old entries simply miss
_MAX_CUSTOM_KEY = 200  # longer custom keys are hashed (characters)


@dataclass(frozen=True)
class ResponseCacheKeyInputs:
    """Everything a response-cache key is derived from; a ``key`` function receives one.

    Attributes:
        agent_id: the processor's logical id (key namespace).
        scope: the resolved scope (tenant) of the call, ``None`` when unscoped.
        model: ``{"provider": <_llm_type>, "model_id": <model name or None>, "llm_string": <_get_llm_string()>}``.
        prompt: the messages the model is about to receive, system message first when there is one.
        step_number: model calls already made in this agent turn (AI messages after the last human message):
            0 on the first call, 1 after one tool round, ...
        tools: the tools offered to the model (``BaseTool`` objects or dict schemas).
        tool_choice: the request's tool choice (``None``, ``"auto"``, ``"any"``, a tool name, ...).
        response_format: the request's structured-output format (``ToolStrategy``/``ProviderStrategy``/schema).
        settings: per-request model settings (keyword arguments bound on the model call).
    """

    agent_id: str
    scope: str | None
    model: Mapping[str, object]
    prompt: Sequence[BaseMessage]
    step_number: int
    tools: Sequence[object] = ()
    tool_choice: object = None
    response_format: object = None
    settings: Mapping[str, object] = field(default_factory=dict)


@lru_cache(maxsize=4096)  # scopes are user ids: a few per process; hashed once each, not on every call
def _scope_hex(scope: str) -> str:
    """The SHA-256 of ``scope`` (UTF-8), hex."""
    return hashlib.sha256(scope.encode()).hexdigest()


def key_namespace(agent_id: str, scope: str | None) -> str:
    """``response:{agent_id}`` plus ``:{sha256(scope)[:8]}`` when scoped (the scope itself never appears)."""
    if scope is None:
        return f"{KEY_PREFIX}:{agent_id}"
    digest = _scope_hex(scope) if type(scope) is str else hashlib.sha256(scope.encode()).hexdigest()
    return f"{KEY_PREFIX}:{agent_id}:{digest[:8]}"


def custom_key(agent_id: str, scope: str | None, value: str, step: int = 0) -> str:
    """A caller-chosen key, still namespaced by agent id and scope: ``{namespace}:key:{value}[@{scope hash}]``;
    ``{namespace}:key+{step}:{value}[@{scope hash}]`` for step ``step >= 1`` of a tool loop.

    Args:
        agent_id, scope: as for the default key (``scope=None``: unscoped).
        value: the caller's key (``ResponseCache(key=...)`` or the per-call ``key``); text, no lone surrogates.
        step: the model call's step number (`step_number`: AI messages since the last human message). A fixed
            key names the answer to one user turn; without the step, every call of a tool loop would read step 0's
            reply (a tool call) again and the agent would loop. A key *function* gets ``step_number`` in its inputs
            and decides for itself, so its result is used with ``step=0``.

    Values longer than 200 characters are replaced by their SHA-256 (first 32 hex digits), so Redis keys stay short.
    Unlike Mastra's, a fixed key never hits across tenants: a scoped key carries 160 bits of the scope's SHA-256
    (the namespace's 32 bits alone collide after ~65,000 tenants; the default key hashes the scope with the prompt,
    so it needs no more).

    Raises:
        UnicodeEncodeError: ``value`` holds a lone surrogate (callers check it first and name the option).
    """
    if len(value) > _MAX_CUSTOM_KEY:
        value = "sha256-" + hashlib.sha256(value.encode()).hexdigest()[:32]
    tag = f"key+{step}" if step else "key"
    if scope is None:
        return f"{key_namespace(agent_id, scope)}:{tag}:{value}"
    # the namespace holds digits 0-7 of the scope's SHA-256; digits 8-39 follow the value (160 bits in all)
    return f"{key_namespace(agent_id, scope)}:{tag}:{value}@{hashlib.sha256(scope.encode()).hexdigest()[8:40]}"


def step_number(messages: Sequence[object]) -> int:
    """AI messages after the last human message (all AI messages when there is none)."""
    count = 0
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            break
        if isinstance(message, AIMessage):
            count += 1
    return count


def describe_response_format(fmt: object) -> dict[str, object] | None:
    """A stable description of a structured-output format: strategy name + the JSON schemas the provider sees."""
    if fmt is None:
        return None
    specs = getattr(fmt, "schema_specs", None)
    if specs is None and getattr(fmt, "schema_spec", None) is not None:
        specs = [getattr(fmt, "schema_spec")]  # noqa: B009 - fmt is any object: no attribute to name statically
    out: dict[str, object] = {"strategy": type(fmt).__name__}
    if specs is not None:
        out["schemas"] = [
            {
                "name": s.name,
                "description": s.description,
                "schema": s.json_schema,
                "strict": getattr(s, "strict", None),
            }
            for s in specs
        ]
        for attr in ("tool_message_content", "strict"):
            if hasattr(fmt, attr):
                out[attr] = getattr(fmt, attr)
        return out
    schema = getattr(fmt, "schema", fmt)
    out["schemas"] = [canonical_tool(schema)]
    return out


def _payload(inputs: ResponseCacheKeyInputs) -> dict[str, object]:
    """The value whose canonical JSON is hashed (`_digest` hashes the same bytes without building it)."""
    return {
        "v": _KEY_VERSION,
        "agent_id": inputs.agent_id,
        "scope": inputs.scope,
        "step": inputs.step_number,
        "model": dict(inputs.model),
        "settings": dict(inputs.settings),
        "prompt": [digest.decode() for digest in message_digests(inputs.prompt)],
        "tools": hashlib.sha256(canonical_json(canonical_tools(inputs.tools))).hexdigest()[:32],
        "tool_choice": inputs.tool_choice,
        "response_format": describe_response_format(inputs.response_format),
    }


_VERSION_TAIL: Final = b',"v":' + canonical_json(_KEY_VERSION) + b"}"
_HEAD_MEMO: dict[
    tuple[str, object, object, object], bytes
] = {}  # (agent id, provider, model id, llm string) -> head JSON
_HEAD_MEMO_MAX = 1024
_MODEL_KEYS: Final = frozenset({"provider", "model_id", "llm_string"})


def _head(agent_id: str, model: Mapping[str, object]) -> bytes:
    """``canonical_json({"agent_id": ..., "model": ...})``; remembered by value when the model part is all strings."""
    if len(model) == 3 and model.keys() == _MODEL_KEYS:
        memo_key = (agent_id, model.get("provider"), model.get("model_id"), model.get("llm_string"))
        if all(v is None or type(v) is str for v in memo_key):
            found = _HEAD_MEMO.get(memo_key)
            if found is None:
                if len(_HEAD_MEMO) >= _HEAD_MEMO_MAX:
                    _HEAD_MEMO.clear()
                found = _HEAD_MEMO[memo_key] = canonical_json({"agent_id": agent_id, "model": dict(model)})
            return found
    return canonical_json({"agent_id": agent_id, "model": dict(model)})


def _request_head(agent_id: str, model: object) -> bytes:
    """``_head(agent_id, model_identity(model))`` without building the identity dict in the usual case (no bound
    kwargs, string parts): the same memo, keyed by the same tuple."""
    provider, model_id, identity, bound = steady_identity_parts(model)
    if (
        not bound
        and type(identity) is str
        and (provider is None or type(provider) is str)
        and (model_id is None or type(model_id) is str)
    ):
        memo_key = (agent_id, provider, model_id, identity)
        found = _HEAD_MEMO.get(memo_key)
        if found is not None:
            return found
    parts: dict[str, object] = {"provider": provider, "model_id": model_id, "llm_string": identity}
    if bound:
        parts["bound"] = bound
    return _head(agent_id, parts)


def _middle(
    response_format: object, scope: str | None, settings: Mapping[str, object], step: int, tool_choice: object
) -> bytes:
    """``canonical_json`` of the five middle fields; written directly in the usual case (no format, no
    settings, a string or no tool choice), where the general path would walk the value looking for NaN."""
    if (
        response_format is None
        and not settings
        and type(step) is int
        and (tool_choice is None or type(tool_choice) is str)
    ):
        return b"".join(
            (
                b'{"response_format":null,"scope":',
                orjson.dumps(scope),
                b',"settings":{},"step":',
                str(step).encode(),
                b',"tool_choice":',
                orjson.dumps(tool_choice),
                b"}",
            )
        )
    return canonical_json(
        {
            "response_format": describe_response_format(response_format),
            "scope": scope,
            "settings": dict(settings),
            "step": step,
            "tool_choice": tool_choice,
        }
    )


def _digest_after_head(
    head: bytes,
    scope: str | None,
    prompt: Iterable[object],
    step: int,
    tools: bytes,
    tool_choice: object,
    response_format: object,
    settings: Mapping[str, object],
) -> str:
    """``sha256(canonical_json(_payload(inputs))).hexdigest()[:32]``, fed to SHA-256 piece by piece, ``head``
    being `_head` of the agent id and model part and ``tools`` `tools_digest` of the tool list.

    Canonical JSON of a dict is ``{"key":value,...}`` with sorted keys and no whitespace, so the pieces below (two
    small dicts whose keys sort around ``prompt`` and ``tools``, stripped of their braces) are the same bytes in
    the same order (pinned by tests/test_response_cache_fastpath.py); the prompt's digest list is hashed where it
    was written, never copied into one payload.
    """
    middle = _middle(response_format, scope, settings, step, tool_choice)
    h = hashlib.sha256(memoryview(head)[:-1])
    h.update(b',"prompt":')
    h.update(prompt_digest_json(prompt))
    h.update(b",")
    h.update(memoryview(middle)[1:-1])
    h.update(b',"tools":')
    h.update(tools)
    h.update(_VERSION_TAIL)
    return h.hexdigest()[:32]


def _digest(inputs: ResponseCacheKeyInputs) -> str:
    return _digest_after_head(
        _head(inputs.agent_id, inputs.model),
        inputs.scope,
        inputs.prompt,
        inputs.step_number,
        tools_digest(inputs.tools),
        inputs.tool_choice,
        inputs.response_format,
        inputs.settings,
    )


def build_response_cache_key(inputs: ResponseCacheKeyInputs) -> str:
    """The default, deterministic response-cache key for ``inputs`` (format in the module docstring).

    The same conversation rebuilt with new message ids or run metadata gives the same key; any change to what the
    provider would receive (a word of the prompt, a tool schema, the temperature, the model) gives another.

    Args:
        inputs: a `ResponseCacheKeyInputs`; use ``dataclasses.replace(inputs, ...)`` to key on a variant.

    Returns:
        ``response:{agent_id}[:{scope8}]:{hash32}``.

    Raises:
        TypeError: ``inputs`` is not a ``ResponseCacheKeyInputs``.
    """
    if not isinstance(inputs, ResponseCacheKeyInputs):
        raise TypeError(f"inputs must be ResponseCacheKeyInputs, got {type(inputs).__name__}: {inputs!r}")
    return f"{key_namespace(inputs.agent_id, inputs.scope)}:{_digest(inputs)}"


_NO_SETTINGS: Final[Mapping[str, object]] = {}


def resolved_system(request: ModelRequest) -> SystemMessage | None:
    """The system message the model will get once typed memory is applied: the request's own, plus the agent
    state's ``memory_prompt`` when ``TypedMemoryMiddleware`` has not added it yet (it sits inside the
    ResponseCache in the middleware list). The key is then the same in either order, and a reply written on one
    user's memories is never served on another's (docs/architecture.md: the key covers the prompt after memory loading).
    """
    system = request.system_message
    state = request.state
    memory_prompt = state.get("memory_prompt") if isinstance(state, Mapping) else None
    if not memory_prompt or not isinstance(memory_prompt, str):
        return system
    # Imported here: only agents with typed memory get this far (the memory package is loaded by then), and
    # importing the ResponseCache must not load the memory package and its store dependencies.
    from promptcache.memory._render import holds_memory_prompt, with_memory_prompt

    return system if holds_memory_prompt(system, memory_prompt) else with_memory_prompt(system, memory_prompt)


def request_key(request: ModelRequest, agent_id: str, scope: str | None) -> str:
    """``build_response_cache_key(inputs_from_request(request, agent_id, scope))``, without building the inputs.

    The processor's default key on every model call: the same string, minus the dataclass and list copies.
    """
    messages = request.messages
    system = resolved_system(request)
    prompt = messages if system is None else chain((system,), messages)
    digest = _digest_after_head(
        _request_head(agent_id, request.model),
        scope,
        prompt,
        step_number(messages),
        tools_part(request.tools or ()),
        request.tool_choice,
        request.response_format,
        request.model_settings or _NO_SETTINGS,
    )
    return f"{key_namespace(agent_id, scope)}:{digest}"


def inputs_from_request(request: ModelRequest, agent_id: str, scope: str | None) -> ResponseCacheKeyInputs:
    """Key inputs for a LangChain ``ModelRequest`` (``create_agent`` or ``with_processors``)."""
    messages = list(request.messages)
    system = resolved_system(request)
    prompt = [system, *messages] if system is not None else messages
    return ResponseCacheKeyInputs(
        agent_id=agent_id,
        scope=scope,
        model=model_identity(request.model),
        prompt=prompt,
        step_number=step_number(messages),
        tools=list(request.tools or ()),
        tool_choice=request.tool_choice,
        response_format=request.response_format,
        settings=dict(request.model_settings or {}),
    )


def key_frame(
    agent_id: str, scope: str | None, model: Mapping[str, object], step: int, tools: Sequence[object]
) -> tuple[bytes, bytes]:
    """The bytes the default key hashes before and after the prompt's digest list, for a call without tool choice,
    response format or settings: ``build_response_cache_key`` gives ``f"{key_namespace(agent_id, scope)}:"``
    followed by the first 32 hex digits of ``sha256(before + prompt_digest_json(prompt) + after)``.

    A caller that sends one growing prompt (``promptcache replay``) feeds SHA-256 each new message's digest once
    and copies the hash per call, instead of hashing the whole digest list again (tests/replay pins the keys equal).
    """
    before = bytes(memoryview(_head(agent_id, model))[:-1]) + b',"prompt":'
    middle = _middle(None, scope, _NO_SETTINGS, step, None)
    return before, b"," + middle[1:-1] + b',"tools":' + tools_digest(tools) + _VERSION_TAIL

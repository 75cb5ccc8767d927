"""Processor hooks that return the wrong type, with_processors stream/astream and other middleware kinds, per-call options."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, ClassVar

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.store.memory import InMemoryStore

from promptcache import (
    InMemoryServerCache,
    Processor,
    ResponseCache,
    with_processors,
)
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore
from promptcache.testing import ScriptedChatModel


@pytest.mark.parametrize("bad", [None, {"messages": ["hi"]}, [AIMessage("x")]], ids=["None", "dict", "list"])
def test_request_hook_returning_a_non_request_is_named(bad):
    """``process_request`` must return a request or a response. Returning ``None`` (a forgotten ``return``), a
    dict or a list reaches the model call as the "request" and dies there with ``AttributeError: 'NoneType'
    object has no attribute 'tools'`` (agent) / ``... 'model_settings'`` (with_processors), naming neither the hook
    nor the processor. Expected: a ``TypeError`` naming ``process_request`` and the returned type, in every mode."""

    class Forgetful(Processor):
        def process_request(self, request: ModelRequest) -> Any:
            return bad

    async def astream(w: Any) -> list:
        return [c async for c in w.astream("hi")]

    runs = {
        "agent": lambda m: create_agent(m, tools=[], middleware=[Forgetful()]).invoke({"messages": [("user", "hi")]}),
        "invoke": lambda m: with_processors(m, [Forgetful()]).invoke("hi"),
        "ainvoke": lambda m: asyncio.run(with_processors(m, [Forgetful()]).ainvoke("hi")),
        "stream": lambda m: list(with_processors(m, [Forgetful()]).stream("hi")),
        "astream": lambda m: asyncio.run(astream(with_processors(m, [Forgetful()]))),
    }
    for mode, run in runs.items():
        model = ScriptedChatModel(replies=["hello"])
        with pytest.raises(TypeError, match="process_request") as info:
            run(model)
        assert type(bad).__name__ in str(info.value) or repr(bad) in str(info.value), (mode, str(info.value))
        assert model.calls == 0, mode


@pytest.mark.parametrize("result", [[], [HumanMessage("not a reply")]], ids=["empty", "human-message"])
def test_agent_short_circuit_without_an_ai_message_is_an_error_as_in_with_processors(result):
    """A short-circuit whose ``ModelResponse`` holds no ``AIMessage`` is an error under ``with_processors``
    (``ValueError: processors produced no AIMessage``), but the same processor in ``create_agent`` ends the turn
    silently with no reply at all (``[]``), or appends the ``HumanMessage`` to the graph state as if the user had
    said it. The same processor must behave the same in both: a clear error naming what it returned."""

    class Short(Processor):
        def process_request(self, request: ModelRequest) -> Any:
            return ModelResponse(result=list(result))

    model = ScriptedChatModel(replies=["never"])
    with pytest.raises((TypeError, ValueError), match="AIMessage"):
        with_processors(model, [Short()]).invoke("hi")
    with pytest.raises((TypeError, ValueError), match="AIMessage"):
        create_agent(model, tools=[], middleware=[Short()]).invoke(
            {"messages": [("user", "hi")]}, {"recursion_limit": 5}
        )
    assert model.calls == 0


def test_overriding_only_the_async_request_hook_is_not_silently_skipped_by_sync_calls():
    """A processor that overrides only ``aprocess_request`` (e.g. an async redactor) is silently a no-op on every
    sync path (``agent.invoke``, ``wrapped.invoke``, ``wrapped.stream``): the unredacted prompt reaches the model.
    LangChain's own ``AgentMiddleware`` raises for an async-only hook called synchronously. Expected: the sync
    path either runs the async hook or raises a clear error; it never skips it."""

    class Redact(Processor):
        async def aprocess_request(self, request: ModelRequest) -> Any:
            return request.override(messages=[HumanMessage("[redacted]")])

    def sent(run: Any) -> str | None:
        model = ScriptedChatModel(replies=["ok"])
        try:
            run(model)
        except (NotImplementedError, TypeError, RuntimeError):
            return None  # a clear refusal is fine
        return model.seen[0][-1].content

    assert sent(lambda m: asyncio.run(with_processors(m, [Redact()]).ainvoke("card 4111"))) == "[redacted]"
    assert sent(lambda m: with_processors(m, [Redact()]).invoke("card 4111")) in (None, "[redacted]")
    assert sent(lambda m: list(with_processors(m, [Redact()]).stream("card 4111"))) in (None, "[redacted]")
    assert sent(
        lambda m: create_agent(m, tools=[], middleware=[Redact()]).invoke({"messages": [("user", "card 4111")]})
    ) in (None, "[redacted]")


class Guard(Processor):
    """A processor written as a plain wrap_model_call (e.g. a guard / rate limiter): never calls the model."""

    def wrap_model_call(self, request: ModelRequest, handler: Any) -> ModelResponse:
        return ModelResponse(result=[AIMessage("blocked")])

    async def awrap_model_call(self, request: ModelRequest, handler: Any) -> ModelResponse:
        return ModelResponse(result=[AIMessage("blocked")])


def test_stream_and_astream_run_a_processors_own_wrap_model_call():
    """``with_processors`` streams a ``Processor`` through its hooks only, so a ``Processor`` subclass that
    implements ``wrap_model_call`` itself (a guard, a retry, a fallback) is bypassed by ``stream``/``astream``:
    ``invoke`` answers ``blocked`` without calling the model, ``stream`` calls the model and yields ``hello``.
    A plain ``AgentMiddleware`` gets its ``wrap_model_call`` run on stream (whole reply in one chunk); a
    ``Processor`` that overrides it must too."""
    model = ScriptedChatModel(replies=["hello"], cycle=True)
    wrapped = with_processors(model, [Guard()])
    assert wrapped.invoke("hi").content == "blocked"
    assert "".join(str(c.content) for c in wrapped.stream("hi")) == "blocked"

    async def astream() -> str:
        return "".join([str(c.content) async for c in wrapped.astream("hi")])

    assert asyncio.run(astream()) == "blocked"
    assert model.calls == 0


def test_with_processors_runs_typed_memory_or_refuses_it():
    """``with_processors(model, [TypedMemoryMiddleware(memory)])`` is accepted, but the middleware's
    ``before_agent`` (where memories are loaded) never runs outside ``create_agent``, so the model silently gets
    no memory at all: the user's rule below never reaches it. The same processors are promised to work around a
    plain chat model; expected: the memories are loaded, or ``with_processors`` refuses the middleware with a
    clear error (pointing to ``MemoryNode``)."""
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("u1", "feedback", "Never paste passwords into answers.")
    model = ScriptedChatModel(replies=["ok"])
    try:
        wrapped = with_processors(model, [TypedMemoryMiddleware(memory)])
    except (TypeError, ValueError):
        return  # refused: fine
    wrapped.invoke([SystemMessage("You are a helper."), HumanMessage("hi")], config={"configurable": {"user_id": "u1"}})
    assert "Never paste passwords" in str(model.seen[0][0].content)


class _Runs(BaseCallbackHandler):
    def __init__(self) -> None:
        self.starts: list[Any] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: Any, **kwargs: Any) -> None:
        self.starts.append(run_id)


def test_the_inner_model_run_never_reuses_the_callers_run_id():
    """``with_processors`` makes the caller's config current for the hooks, ``run_id`` included, so the wrapped
    model's own run inherits it: two chat-model runs with the same id (LangSmith merges/corrupts them). With
    ``astream_events(version="v2")``, which always passes a ``run_id``, the event handler logs
    ``KeyError(UUID(...))`` and the root run's ``on_chat_model_end`` event is never emitted."""
    wrapped = with_processors(ScriptedChatModel(replies=["one two"], cycle=True), [Processor()])
    runs = _Runs()
    run_id = uuid.uuid4()
    wrapped.invoke("hi", config={"callbacks": [runs], "run_id": run_id})
    assert runs.starts[0] == run_id
    assert len(set(runs.starts)) == len(runs.starts) == 2, runs.starts

    async def events() -> list[dict]:
        return [e async for e in wrapped.astream_events("hi", version="v2")]

    evs = asyncio.run(events())
    root = evs[0]["run_id"]
    own = [e["event"] for e in evs if e["run_id"] == root]
    assert own[0] == "on_chat_model_start" and own[-1] == "on_chat_model_end", own
    assert own.count("on_chat_model_start") == own.count("on_chat_model_end") == 1, own


def test_batch_and_abatch_give_each_item_its_own_scope_and_options():
    class Who(Processor):
        context_key: ClassVar[str] = "attack.who"
        context_options: ClassVar[frozenset[str]] = frozenset({"tag"})

        def process_request(self, request: ModelRequest) -> Any:
            return AIMessage(f"{self.resolve_scope()}|{self.call_options().get('tag')}|{request.messages[-1].content}")

        async def aprocess_request(self, request: ModelRequest) -> Any:
            await asyncio.sleep(0.005)  # interleave the items
            scope = self.resolve_scope()
            await asyncio.sleep(0.005)
            return AIMessage(f"{scope}|{self.call_options().get('tag')}|{request.messages[-1].content}")

    wrapped = with_processors(ScriptedChatModel(), [Who()])
    configs = []
    for i in range(16):
        config = Who.context(tag=i)
        config["configurable"]["user_id"] = f"u{i}"
        configs.append(config)
    expected = [f"u{i}|{i}|m{i}" for i in range(16)]
    assert [m.content for m in wrapped.batch([f"m{i}" for i in range(16)], config=configs)] == expected
    assert [m.content for m in asyncio.run(wrapped.abatch([f"m{i}" for i in range(16)], config=configs))] == expected
    assert wrapped.with_config(configurable={"user_id": "cfg"}).invoke("z").content == "cfg|None|z"
    assert wrapped.with_retry().invoke("z", config={"configurable": {"user_id": "r"}}).content == "r|None|z"


def test_a_raising_response_hook_inside_the_cache_stores_nothing_in_any_mode():
    class Boom(Processor):
        def process_response(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
            raise RuntimeError("boom")

    async def astream(w: Any) -> list:
        return [c async for c in w.astream("hi")]

    for mode in ["agent", "invoke", "ainvoke", "stream", "astream"]:
        cache = InMemoryServerCache()
        model = ScriptedChatModel(replies=["a b"], cycle=True)
        procs = [ResponseCache(cache), Boom()]
        with pytest.raises(RuntimeError, match="boom"):
            if mode == "agent":
                create_agent(model, tools=[], middleware=procs).invoke({"messages": [("user", "hi")]})
            elif mode == "invoke":
                with_processors(model, procs).invoke("hi")
            elif mode == "ainvoke":
                asyncio.run(with_processors(model, procs).ainvoke("hi"))
            elif mode == "stream":
                list(with_processors(model, procs).stream("hi"))
            else:
                asyncio.run(astream(with_processors(model, procs)))
        # nothing stored: the next call reaches the model again (and fails the same way)
        with pytest.raises(RuntimeError, match="boom"):
            with_processors(model, procs).invoke("hi")
        assert model.calls == 2, mode


@pytest.mark.parametrize(
    "scope, exc",
    [("", ValueError), (3.5, TypeError), (True, TypeError), ({"u": 1}, TypeError), ("a.b", ValueError)],
    ids=["empty", "float", "bool", "dict", "separator"],
)
def test_memory_middleware_context_validates_the_scope_like_response_cache(scope, exc):
    """``ResponseCache.context(scope=...)`` rejects a bad scope at once, naming it; ``TypedMemoryMiddleware.context``
    accepts anything (``""``, ``3.5``, ``True``, a dict, ``"a.b"`` which no memory namespace can hold) and the
    error only comes later, from inside the agent run."""
    with pytest.raises(exc):
        TypedMemoryMiddleware.context(scope=scope)
    with pytest.raises(exc):
        TypedMemoryMiddleware.apply_context({"configurable": {}}, scope=scope)

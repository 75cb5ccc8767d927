"""Attack: the processor API (``Processor``, ``with_processors``) and the agent middlewares (``ResponseCache``,
``TypedMemoryMiddleware``, ``IntentionCache``) alone and together.

Every test asserts the CORRECT behaviour (the project's rules):
- a processor is an ``AgentMiddleware`` and the same processors wrap a plain chat model (``with_processors``);
  request hooks in list order, response hooks in reverse, a short-circuit skips the model and inner processors;
- sync and async twins behave the same (invoke/ainvoke, stream/astream, batch/abatch);
- bad input raises a clear exception naming the bad value before anything is written;
- a cache replays a reply only when the resolved prompt repeats; side-effecting tools are never served from memory.

Tests for findings fail today; tests marked ``# passes`` cover something the other test files do not.
Real Redis (fixtures in conftest.py), each test under its own key prefix.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from typing import Any, ClassVar

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import MemorySaver
from langgraph.store.memory import InMemoryStore

from promptcache import (
    InMemoryServerCache,
    IntentionCache,
    IntentionMemory,
    Processor,
    ResponseCache,
    make_retrieve_memory_tool,
    with_processors,
)
from promptcache.memory import TypedMemoryMiddleware, TypedMemoryStore, make_reference_tool, make_remember_tool
from promptcache.testing import ScriptedChatModel


def _call(name: str, args: dict, i: int = 0) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{name}-{i}"}])


def _cache_mark(message: Any) -> Any:
    meta = (getattr(message, "response_metadata", None) or {}).get("promptcache") or {}
    return meta.get("cache") or meta.get("intention_cache")


# =================================================================================================================
# hooks returning the wrong type
# =================================================================================================================
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


# =================================================================================================================
# with_processors: stream/astream, other middleware kinds, callbacks
# =================================================================================================================
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


# passes
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


# passes
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


# =================================================================================================================
# per-call options
# =================================================================================================================
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


# =================================================================================================================
# ResponseCache + TypedMemoryMiddleware: the key must be the resolved prompt
# =================================================================================================================
@pytest.mark.parametrize("order", ["cache-first", "memory-first"])
def test_response_cache_never_replays_an_answer_given_on_other_memories(order):
    """The cache "replays a whole model reply when the resolved prompt repeats". With ``ResponseCache`` listed
    before ``TypedMemoryMiddleware`` (the outer processor), its key is computed before the memory block is added,
    although ``before_agent`` has already loaded it: after the user's project state changes (ETA 15:00 -> 17:00),
    the same question is a hit and replays the stale ``15:00`` answer, while the model would now see 17:00. The
    memory block is part of the resolved prompt in either order."""
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("u1", "project_state", "ETA for order 42 is 15:00", subject="eta order 42")
    model = ScriptedChatModel(replies=["It arrives at 15:00.", "It arrives at 17:00."])
    rc, tm = ResponseCache(InMemoryServerCache()), TypedMemoryMiddleware(memory)
    agent = create_agent(model, tools=[], middleware=[rc, tm] if order == "cache-first" else [tm, rc])
    config = {"configurable": {"user_id": "u1"}}
    ask = {"messages": [("user", "When does order 42 arrive?")]}
    assert agent.invoke(ask, config)["messages"][-1].content == "It arrives at 15:00."
    memory.put("u1", "project_state", "ETA for order 42 is 17:00", subject="eta order 42")
    reply = agent.invoke(ask, config)["messages"][-1]
    assert reply.content == "It arrives at 17:00.", _cache_mark(reply)
    assert model.calls == 2


def test_shared_response_cache_never_gives_one_user_an_answer_built_on_anothers_memories():
    """Same root cause, across users: a shared cache (``scope=None``, e.g. an FAQ cache) listed before the memory
    middleware gives Bob the answer the model wrote for Alice from *her* memories ("vegan recipe"), although Bob's
    resolved prompt (his own facts) differs. With the memory middleware first, Bob gets his own answer."""
    memory = TypedMemoryStore(InMemoryStore())
    memory.put("alice", "user_fact", "Alice is vegan.")
    memory.put("bob", "user_fact", "Bob is allergic to nuts.")
    model = ScriptedChatModel(replies=["A vegan recipe for Alice.", "A nut-free recipe for Bob."])
    agent = create_agent(
        model, tools=[], middleware=[ResponseCache(InMemoryServerCache(), scope=None), TypedMemoryMiddleware(memory)]
    )
    ask = {"messages": [("user", "Suggest a dinner.")]}
    agent.invoke(ask, {"configurable": {"user_id": "alice"}})
    reply = agent.invoke(ask, {"configurable": {"user_id": "bob"}})["messages"][-1]
    assert reply.content == "A nut-free recipe for Bob.", _cache_mark(reply)


# passes
@pytest.mark.parametrize("order", list(itertools.permutations(["rc", "tm", "ic"])), ids="-".join)
def test_all_three_middlewares_together_in_any_order(order):
    ran: list[str] = []

    @tool
    def get_weather(city: str) -> dict:
        """Current weather for a city."""
        ran.append(city)
        return {"city": city, "temp_c": 21}

    memory = TypedMemoryStore(InMemoryStore())
    memory.put("u1", "feedback", "Be brief.")
    intentions = IntentionMemory()
    procs = {
        "rc": ResponseCache(InMemoryServerCache()),
        "tm": TypedMemoryMiddleware(memory),
        "ic": IntentionCache(intentions, serve_repeats=True),
    }
    model = ScriptedChatModel(replies=[_call("get_weather", {"city": "Paris"}), "21 C."])
    agent = create_agent(
        model,
        tools=[get_weather, make_retrieve_memory_tool(intentions)],
        middleware=[procs[p] for p in order],
        checkpointer=MemorySaver(),
    )
    ask = {"messages": [("user", "Weather in Paris?")]}
    agent.invoke(ask, {"configurable": {"user_id": "u1", "thread_id": "t1"}})
    out = asyncio.run(agent.ainvoke(ask, {"configurable": {"user_id": "u1", "thread_id": "t2"}}))
    assert [_cache_mark(m) for m in out["messages"][1:]] == ["hit", "hit", "hit"]
    assert out["messages"][-1].content == "21 C." and model.calls == 2 and ran == ["Paris"]
    assert "Be brief." in model.seen[0][0].content


# passes
def test_agent_abatch_of_many_users_with_memory_and_cache_never_mixes_them(redis_cache):
    memory = TypedMemoryStore(InMemoryStore())
    n = 12
    for i in range(n):
        memory.put(f"u{i}", "user_fact", f"fact of u{i}")
    model = ScriptedChatModel(replies=["ok"], cycle=True)
    agent = create_agent(
        model,
        tools=[],
        system_prompt="sys",
        checkpointer=MemorySaver(),
        middleware=[TypedMemoryMiddleware(memory), ResponseCache(redis_cache)],
    )
    configs = [{"configurable": {"user_id": f"u{i}", "thread_id": f"t{i}"}} for i in range(n)]
    inputs = [{"messages": [("user", f"question from u{i}")]} for i in range(n)]
    outs = asyncio.run(agent.abatch(inputs, configs))
    assert [o["memory_scope"] for o in outs] == [f"u{i}" for i in range(n)]
    assert model.calls == n
    for seen in model.seen:
        user = seen[-1].content.split()[-1]
        assert seen[0].content.count("fact of") == 1 and f"fact of {user}" in seen[0].content


# =================================================================================================================
# IntentionCache with the project's own tools and odd tool results
# =================================================================================================================
def test_intention_cache_never_serves_the_remember_tool_instead_of_writing():
    """``remember`` (``make_remember_tool``) writes a memory: a side effect. ``IntentionCache`` does not deny it
    (no deny prefix matches), so it stores its reply and, with ``serve_repeats=True``, answers the repeated
    request "Remember that I am vegan" from memory -- "saved user_fact memory ..." -- without writing: the memory
    deleted in between is never saved again although the model was told it was."""
    memory = TypedMemoryStore(InMemoryStore())
    intentions = IntentionMemory()
    args = {"kind": "user_fact", "content": "I am vegan"}
    model = ScriptedChatModel(replies=[_call("remember", args, 1), "Saved.", _call("remember", args, 2), "Saved."])
    agent = create_agent(
        model, tools=[make_remember_tool(memory)], middleware=[IntentionCache(intentions, serve_repeats=True)]
    )
    config = {"configurable": {"user_id": "u1"}}
    ask = {"messages": [("user", "Remember that I am vegan")]}
    agent.invoke(ask, config)
    (saved,) = memory.list("u1", "user_fact")
    memory.delete("u1", "user_fact", saved.id)
    out = agent.invoke(ask, config)
    assert _cache_mark(out["messages"][2]) is None  # the tool really ran
    assert [m.content for m in memory.list("u1", "user_fact")] == ["I am vegan"]


def test_served_repeat_of_a_content_and_artifact_tool_keeps_the_artifact():
    """A tool with ``response_format="content_and_artifact"`` gives the model the content and the application
    the artifact (e.g. the retrieved documents, here with a ``datetime``). ``serve_repeats`` answers the repeat
    with the stored content only: ``artifact`` is ``None``, so code reading the artifact breaks on a hit.
    Expected: a served repeat carries the same artifact, or such results are not served (the tool runs)."""
    import datetime

    @tool(response_format="content_and_artifact")
    def get_doc(q: str) -> tuple[str, dict]:
        """Fetch a document."""
        return f"summary of {q}", {"doc_id": 7, "fetched": datetime.datetime(2024, 1, 1)}

    model = ScriptedChatModel(replies=[_call("get_doc", {"q": "x"}, 1), "ok", _call("get_doc", {"q": "x"}, 2), "ok"])
    agent = create_agent(model, tools=[get_doc], middleware=[IntentionCache(IntentionMemory(), serve_repeats=True)])
    config = {"configurable": {"user_id": "u1"}}
    first = agent.invoke({"messages": [("user", "Get doc x")]}, config)["messages"][2]
    again = agent.invoke({"messages": [("user", "Get doc x")]}, config)["messages"][2]
    assert again.content == first.content
    assert again.artifact == first.artifact == {"doc_id": 7, "fetched": datetime.datetime(2024, 1, 1)}


# passes
@pytest.mark.parametrize(
    "args",
    [{"intention": 123}, {"intention": None}, {}, {"intention": ["weather"]}],
    ids=["int", "null", "missing", "list"],
)
def test_retrieve_memory_with_a_non_string_intention_goes_back_to_the_model_as_an_error(args):
    intentions = IntentionMemory()
    intentions.store("u1", "weather in paris", {"t": 1}, tool="get_weather", args={"city": "Paris"})
    model = ScriptedChatModel(replies=[_call("retrieve_memory", args), "done"])
    agent = create_agent(model, tools=[make_retrieve_memory_tool(intentions)], middleware=[IntentionCache(intentions)])
    out = agent.invoke({"messages": [("user", "weather?")]}, {"configurable": {"user_id": "u1"}})
    assert out["messages"][2].status == "error" and "intention" in out["messages"][2].content
    assert out["messages"][-1].content == "done"


# =================================================================================================================
# memory tools without a store
# =================================================================================================================
@pytest.mark.parametrize(
    "factory, args",
    [(make_remember_tool, {"kind": "user_fact", "content": "x"}), (make_reference_tool, {"ref_id": "abc123"})],
    ids=["remember", "read_reference"],
)
def test_memory_tools_without_a_store_name_the_missing_store(factory, args):
    """``make_remember_tool()`` / ``make_reference_tool()`` (memory=None: the graph's store) used where there is
    no store: called directly they fail with ``KeyError: '__pregel_runtime'``; in an agent without ``store=``
    with ``TypeError: store must be a langgraph BaseStore, got NoneType``. ``TypedMemoryMiddleware(None)`` and
    ``MemoryNode(None)`` say what is missing (``RuntimeError ... needs an agent store: create_agent(...,
    store=...)``); the tools must too."""
    tool_ = factory()
    config = {"configurable": {"user_id": "u1"}}
    with pytest.raises(RuntimeError, match="store"):
        tool_.invoke(args, config=config)
    model = ScriptedChatModel(replies=[_call(tool_.name, args), "done"])
    with pytest.raises(RuntimeError, match="store"):
        create_agent(model, tools=[tool_]).invoke({"messages": [("user", "hi")]}, config)


# =================================================================================================================
# async Redis across event loops
# =================================================================================================================
def test_async_redis_response_cache_hits_in_a_later_event_loop(redis_url, redis_prefix):
    """``RedisCache(url=...)`` keeps one ``redis.asyncio`` client bound to the first event loop. Every
    ``asyncio.run`` after the first (a CLI, a sync web handler, a Celery task, a notebook cell, pytest's
    per-test loops) fails its reads and writes with ``RuntimeError: Event loop is closed``: logged as a backend
    failure, and the cache never hits again although Redis is up."""
    from promptcache.integrations.redis import RedisCache

    cache = RedisCache(url=redis_url, prefix=redis_prefix)
    model = ScriptedChatModel(replies=["a", "b", "c"])
    wrapped = with_processors(model, [ResponseCache(cache)])
    marks = [_cache_mark(asyncio.run(wrapped.ainvoke("hi"))) for _ in range(3)]
    cache.close()
    assert marks == ["miss", "hit", "hit"] and model.calls == 1


def test_async_redis_intention_memory_finds_in_a_later_event_loop(redis_url, redis_prefix):
    """Same for the Redis intention backend: a result stored in one ``asyncio.run`` is "Error retrieving memory"
    (``RuntimeError: Event loop is closed``, logged) for ``retrieve_memory`` in the next."""
    from promptcache.integrations.redis import RedisIntentionBackend

    intentions = IntentionMemory(RedisIntentionBackend(url=redis_url, prefix=redis_prefix))
    retrieve = make_retrieve_memory_tool(intentions)
    config = {"configurable": {"user_id": "u1"}}
    asyncio.run(intentions.astore("u1", "weather in paris", {"temp_c": 21}, tool="get_weather", args={"city": "Paris"}))
    answer = asyncio.run(retrieve.ainvoke({"intention": "weather in paris"}, config=config))
    assert "temp_c" in answer, answer

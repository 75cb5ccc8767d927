"""The processor contract: hook order, short-circuit, per-call options; create_agent and with_processors."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables.config import ensure_config
from langchain_core.tools import tool
from langgraph.graph import START, MessagesState, StateGraph

from promptcache import Processor, with_processors
from promptcache.testing import ScriptedChatModel


class Recorder(Processor):
    context_key: ClassVar[str] = "test.recorder"
    context_options: ClassVar[frozenset[str]] = frozenset({"flag", "scope"})

    def __init__(self, name: str, log: list, short: str | None = None) -> None:
        self._name, self.log, self.short = name, log, short
        self.options: list[dict[str, Any]] = []

    @property
    def name(self) -> str:
        return self._name

    def process_request(self, request: ModelRequest) -> Any:
        self.log.append(("request", self._name))
        self.options.append(self.call_options())
        if self.short is not None:
            return ModelResponse(result=[AIMessage(content=self.short)])
        return request.override(messages=[*request.messages, HumanMessage(content=f"[{self._name}]")])

    def process_response(self, request: ModelRequest, response: ModelResponse) -> ModelResponse:
        self.log.append(("response", self._name))
        msg = response.result[0]
        return ModelResponse(result=[AIMessage(content=f"{msg.content}<{self._name}>", tool_calls=msg.tool_calls)])


EXPECTED = [("request", "p1"), ("request", "p2"), ("response", "p2"), ("response", "p1")]


def _agent(model: ScriptedChatModel, *procs: Processor) -> Any:
    return create_agent(model, tools=[], middleware=list(procs))


def test_create_agent_hook_order_sync() -> None:
    log: list = []
    model = ScriptedChatModel(replies=["hello"])
    out = _agent(model, Recorder("p1", log), Recorder("p2", log)).invoke({"messages": [HumanMessage("hi")]})
    assert log == EXPECTED
    assert out["messages"][-1].content == "hello<p2><p1>"
    # p1's request reached p2, p2's reached the model: both markers, in order
    assert [m.content for m in model.seen[0]] == ["hi", "[p1]", "[p2]"]
    # the graph state keeps the caller's messages, not the processors' additions
    assert [m.content for m in out["messages"]] == ["hi", "hello<p2><p1>"]


async def test_create_agent_hook_order_async() -> None:
    log: list = []
    model = ScriptedChatModel(replies=["hello"])
    out = await _agent(model, Recorder("p1", log), Recorder("p2", log)).ainvoke({"messages": [HumanMessage("hi")]})
    assert log == EXPECTED
    assert out["messages"][-1].content == "hello<p2><p1>"


@pytest.mark.parametrize("use_async", [False, True])
async def test_short_circuit_skips_model_and_inner(use_async: bool) -> None:
    log: list = []
    model = ScriptedChatModel(replies=["never"])
    agent = _agent(model, Recorder("p1", log, short="cached"), Recorder("p2", log))
    inp = {"messages": [HumanMessage("hi")]}
    out = await agent.ainvoke(inp) if use_async else agent.invoke(inp)
    assert model.calls == 0
    assert log == [("request", "p1")]
    assert out["messages"][-1].content == "cached"


def test_short_circuit_inner_still_runs_outer_response() -> None:
    log: list = []
    model = ScriptedChatModel(replies=["never"])
    out = _agent(model, Recorder("p1", log), Recorder("p2", log, short="cached")).invoke(
        {"messages": [HumanMessage("hi")]}
    )
    assert model.calls == 0
    assert log == [("request", "p1"), ("request", "p2"), ("response", "p1")]
    assert out["messages"][-1].content == "cached<p1>"


@pytest.mark.parametrize("use_async", [False, True])
async def test_per_call_options_reach_hook_in_agent(use_async: bool) -> None:
    rec = Recorder("p1", [])
    agent = _agent(ScriptedChatModel(replies=["a"]), rec)
    config = Recorder.context(flag=7)
    inp = {"messages": [HumanMessage("hi")]}
    await agent.ainvoke(inp, config=config) if use_async else agent.invoke(inp, config=config)
    assert rec.options == [{"flag": 7}]


def test_context_and_apply_context() -> None:
    cfg = {"configurable": {"thread_id": "t1"}, "tags": ["x"]}
    same = Recorder.apply_context(cfg, flag=1)
    assert same is cfg
    Recorder.apply_context(cfg, flag=2, scope=None)
    assert cfg == {"configurable": {"thread_id": "t1", "test.recorder": {"flag": 2, "scope": None}}, "tags": ["x"]}
    assert Recorder.context(flag=3) == {"configurable": {"test.recorder": {"flag": 3}}}
    with pytest.raises(ValueError, match="'colour'"):
        Recorder.context(colour="red")
    with pytest.raises(TypeError, match="takes no per-call options"):
        Processor.context(flag=1)


def test_scope_resolution_order() -> None:
    rec = Recorder("p1", [])
    base = {"configurable": {"user_id": "u1", "langgraph_auth_user_id": "auth"}}
    with pytest.raises(PermissionError, match="'u1'.*'auth'"):  # the authenticated user wins over user_id
        rec.resolve_scope(base)
    rec.allow_scope_override = True  # the constructor opted in: the order without that rule
    assert rec.resolve_scope(base) == "u1"
    rec.allow_scope_override = False
    assert rec.resolve_scope({"configurable": {"user_id": "auth", "langgraph_auth_user_id": "auth"}}) == "auth"
    assert rec.resolve_scope({"configurable": {"langgraph_auth_user_id": "auth"}}) == "auth"
    assert rec.resolve_scope({"configurable": {}}) is None
    per_call = Recorder.apply_context({"configurable": {"user_id": "u1"}}, scope="tenant-9")
    assert rec.resolve_scope(per_call) == "tenant-9"
    assert rec.resolve_scope(Recorder.apply_context({"configurable": {"user_id": "u1"}}, scope=None)) is None
    rec._scope = None  # constructor scope=None: shared across users
    assert rec.resolve_scope(base) is None
    rec._scope = "fixed"
    assert rec.resolve_scope(base) == "fixed"


# -- with_processors --------------------------------------------------------------------------------------------
def _wrapped(log: list, replies: list[Any], **kw: Any) -> tuple[Any, ScriptedChatModel, Recorder]:
    model = ScriptedChatModel(replies=replies, **kw)
    p1 = Recorder("p1", log)
    return with_processors(model, [p1, Recorder("p2", log)]), model, p1


def test_with_processors_invoke_and_batch() -> None:
    log: list = []
    wrapped, model, _ = _wrapped(log, ["a", "b", "c"])
    assert wrapped.invoke([SystemMessage("sys"), HumanMessage("hi")]).content == "a<p2><p1>"
    assert log == EXPECTED
    assert [type(m).__name__ for m in model.seen[0]] == [
        "SystemMessage",
        "HumanMessage",
        "HumanMessage",
        "HumanMessage",
    ]
    assert sorted(m.content for m in wrapped.batch(["x", "y"])) == ["b<p2><p1>", "c<p2><p1>"]
    assert model.calls == 3


async def test_with_processors_ainvoke() -> None:
    log: list = []
    wrapped, _, _ = _wrapped(log, ["a"])
    assert (await wrapped.ainvoke("hi")).content == "a<p2><p1>"
    assert log == EXPECTED


def test_with_processors_stream_order_and_chunks() -> None:
    log: list = []
    wrapped, model, _ = _wrapped(log, ["one two three"])
    chunks = list(wrapped.stream("hi"))
    assert [c.content for c in chunks if c.content] == ["one ", "two ", "three"]
    assert log == EXPECTED
    assert model.calls == 1


async def test_with_processors_astream_order() -> None:
    log: list = []
    wrapped, _, _ = _wrapped(log, ["one two"])
    chunks = [c async for c in wrapped.astream("hi")]
    assert "".join(str(c.content) for c in chunks) == "one two"
    assert log == EXPECTED


def test_with_processors_stream_short_circuit() -> None:
    log: list = []
    model = ScriptedChatModel(replies=["never"])
    wrapped = with_processors(model, [Recorder("p1", log), Recorder("p2", log, short="cached")])
    text = "".join(str(c.content) for c in wrapped.stream("hi"))
    assert text == "cached<p1>"
    assert model.calls == 0
    assert log == [("request", "p1"), ("request", "p2"), ("response", "p1")]


def test_stream_stopped_early_skips_response_hooks() -> None:
    log: list = []
    wrapped, _, _ = _wrapped(log, ["one two three"])
    stream = wrapped.stream("hi")
    next(stream)
    stream.close()
    assert log == [("request", "p1"), ("request", "p2")]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke", "stream", "astream"])
async def test_with_processors_per_call_options(mode: str) -> None:
    wrapped, _, p1 = _wrapped([], ["a"])
    config = Recorder.context(flag=mode)
    if mode == "invoke":
        wrapped.invoke("hi", config=config)
    elif mode == "ainvoke":
        await wrapped.ainvoke("hi", config=config)
    elif mode == "stream":
        list(wrapped.stream("hi", config=config))
    else:
        [c async for c in wrapped.astream("hi", config=config)]
    assert p1.options == [{"flag": mode}]


def _graph(wrapped: Any) -> Any:
    def node(state: MessagesState) -> dict:
        assert ensure_config()["configurable"]["test.recorder"] == {"flag": "graph"}
        return {"messages": [wrapped.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", node)
    builder.add_edge(START, "model")
    return builder.compile()


def test_with_processors_in_langgraph_node() -> None:
    log: list = []
    wrapped, _, p1 = _wrapped(log, ["a"])
    out = _graph(wrapped).invoke({"messages": [HumanMessage("hi")]}, config=Recorder.context(flag="graph"))
    assert out["messages"][-1].content == "a<p2><p1>"
    assert log == EXPECTED
    assert p1.options == [{"flag": "graph"}]


def test_with_processors_in_langgraph_stream_messages() -> None:
    log: list = []
    wrapped, _, _ = _wrapped(log, ["one two"])
    graph = _graph(wrapped)
    tokens = [
        chunk.content
        for chunk, _meta in graph.stream(
            {"messages": [HumanMessage("hi")]}, config=Recorder.context(flag="graph"), stream_mode="messages"
        )
        if chunk.content
    ]
    assert "".join(tokens).startswith("one two")
    assert tokens.count("one ") == 1  # each token once: the inner model's own run is not streamed twice
    assert log == EXPECTED


def test_with_processors_in_lcel_chain() -> None:
    log: list = []
    wrapped, _, p1 = _wrapped(log, ["a", "b"])
    chain = ChatPromptTemplate.from_messages([("system", "be brief"), ("human", "{q}")]) | wrapped
    assert chain.invoke({"q": "hi"}, config=Recorder.context(flag=1)).content == "a<p2><p1>"
    assert "".join(str(c.content) for c in chain.stream({"q": "hi"})) == "b"  # stream: hooks observe, text as streamed
    assert log == EXPECTED * 2
    assert p1.options == [{"flag": 1}, {}]


def test_with_processors_bind_tools_reach_request() -> None:
    seen: list = []

    class ToolSpy(Processor):
        def process_request(self, request: ModelRequest) -> ModelRequest:
            seen.append(([getattr(t, "name", None) for t in request.tools], request.tool_choice))
            return request

    @tool
    def lookup(q: str) -> str:
        """Look something up."""
        return q

    call = AIMessage(content="", tool_calls=[{"name": "lookup", "args": {"q": "x"}, "id": "c1"}])
    model = ScriptedChatModel(replies=[call])
    msg = with_processors(model, [ToolSpy()]).bind_tools([lookup], tool_choice="any").invoke("hi")
    assert seen == [(["lookup"], "any")]
    assert msg.tool_calls[0]["args"] == {"q": "x"}
    assert [t.name for t in model.bound_tools] == ["lookup"]


def test_with_processors_rejects_bad_input() -> None:
    with pytest.raises(TypeError, match="BaseChatModel"):
        with_processors("gpt", [])
    with pytest.raises(TypeError, match="AgentMiddleware"):
        with_processors(ScriptedChatModel(), [object()])

"""ResponseCache fast paths: same keys and entries as the plain implementation, and memos that never go stale."""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelResponse
from langchain.agents.structured_output import ToolStrategy
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage, messages_to_dict
from langchain_core.runnables.config import var_child_runnable_config
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

import promptcache._keys as pk
from promptcache import InMemoryServerCache, ResponseCache, ResponseCacheKeyInputs, build_response_cache_key
from promptcache._tool_keys import canonical_tools
from promptcache.response_cache import _model_identity as mi
from promptcache.response_cache._entry import CorruptEntry, decode_hit, encode_entry
from promptcache.response_cache._keys import _digest, _payload, model_identity
from promptcache.response_cache._tools_digest import tools_digest as _tools_digest
from promptcache.testing import ScriptedChatModel


class Weather(BaseModel):
    """Weather report."""

    city: str = Field(description="City name.")


class LookupArgs(BaseModel):
    order_id: str = Field(description="The order id, such as '8JX2WO'.")


def _lookup(order_id: str) -> str:
    return "ok"


LOOKUP = StructuredTool.from_function(_lookup, name="lookup", description="Look an order up.", args_schema=LookupArgs)


def prompt() -> list[Any]:
    """Long plain turns (the memoised path), tool calls and results, blocks with bytes, a dict message."""
    return [
        SystemMessage("You are a helpful agent. " * 30),
        HumanMessage('I need help with {"order": "8JX2WO", "items": ["a", "b"]}\n' * 20, id="h1"),
        AIMessage("", tool_calls=[{"name": "lookup", "args": {"order_id": "8JX2WO"}, "id": "call_1"}]),
        ToolMessage('{"status": "shipped"}' * 20, tool_call_id="call_1", name="lookup"),
        AIMessage("It shipped. " * 30),
        HumanMessage("Thanks! And the other one?"),
        HumanMessage(
            [{"type": "text", "text": "see"}, {"type": "image", "base64": b"\x89PNG", "mime_type": "image/png"}]
        ),
        {"role": "user", "content": "a dict message " * 30, "id": "d1"},
    ]


def cases() -> dict[str, ResponseCacheKeyInputs]:
    base: dict[str, Any] = {
        "agent_id": "bot",
        "scope": None,
        "step_number": 1,
        "prompt": prompt(),
        "model": model_identity(ScriptedChatModel(temperature=0.2)),
    }
    return {
        "plain": ResponseCacheKeyInputs(**base),
        "scoped_tools": ResponseCacheKeyInputs(
            **{**base, "scope": "user-7"}, tools=[LOOKUP], tool_choice="any", settings={"temperature": 0.5}
        ),
        "dict_tool_format": ResponseCacheKeyInputs(
            **base,
            tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
            response_format=ToolStrategy(Weather),
        ),
        "bound_model": ResponseCacheKeyInputs(
            **{**base, "model": model_identity(ScriptedChatModel().bind(temperature=0.9, stop=["x"]))}
        ),
    }


# keys ------------------------------------------------------------------------------------------------------------
def test_keys_are_pinned() -> None:
    """Key layout version 2 (the prompt as per-message digests): a change to these strings orphans every stored
    entry, so it must come with a new ``_KEY_VERSION``."""
    assert {name: build_response_cache_key(inputs) for name, inputs in cases().items()} == {
        "plain": "response:bot:382561f0ba50a0cfc83840138e1cb4ab",
        "scoped_tools": "response:bot:09208114:97cea80c8531c7d9f9c4a7021ccad81f",
        "dict_tool_format": "response:bot:68702c3ced297214db835919fbbdeec4",
        "bound_model": "response:bot:07dead98e66c6744f1f361381c7328e8",
    }


def test_digest_hashes_the_reference_payload_bytes() -> None:
    for inputs in cases().values():
        reference = hashlib.sha256(pk.canonical_json(_payload(inputs))).hexdigest()[:32]
        assert _digest(inputs) == reference
        assert _digest(inputs) == reference  # second time: from the memos


def test_tool_list_json_is_remembered_for_tool_objects_only() -> None:
    tools = [LOOKUP]
    first = _tools_digest(tools)
    assert first == pk.canonical_json(hashlib.sha256(pk.canonical_json(canonical_tools(tools))).hexdigest()[:32])
    assert _tools_digest(list(tools)) is first  # same tool objects, new list: the memo
    schema = {"type": "function", "function": {"name": "f", "parameters": {}}}
    before = _tools_digest([schema])
    schema["function"]["name"] = "g"  # a dict schema edited in place: read again
    after = _tools_digest([schema])
    assert after != before
    assert after == pk.canonical_json(hashlib.sha256(pk.canonical_json([schema])).hexdigest()[:32])


# model identity --------------------------------------------------------------------------------------------------
class SerializableScripted(ScriptedChatModel):
    """The scripted model, serialisable: LangChain's llm string is then its cached ``dumpd``.

    Its call records are left out of ``dumpd`` (``exclude=True``), as a provider model's client is: they are not
    constructor arguments, and a serialised form that changed on every call would never hit.
    """

    calls: int = Field(default=0, exclude=True)
    seen: list[Any] = Field(default_factory=list, exclude=True)
    bound_tools: list[Any] = Field(default_factory=list, exclude=True)

    @classmethod
    def is_lc_serializable(cls) -> bool:
        return True


class CustomParams(ScriptedChatModel):
    def _get_invocation_params(self, stop: Any = None, **kwargs: Any) -> dict[str, Any]:
        return {**super()._get_invocation_params(stop=stop, **kwargs), "region": "eu-west-1"}


def test_fast_path_gives_langchains_string() -> None:
    for model in (ScriptedChatModel(), ScriptedChatModel(model_name="m2", temperature=0.7)):
        assert mi._path(type(model)) == "fast"
        assert mi.llm_string(model) == model._get_llm_string()
    custom = CustomParams()
    assert mi._path(CustomParams) == "call"
    assert mi.llm_string(custom) == custom._get_llm_string()
    assert "eu-west-1" in mi.llm_string(custom)


def test_fast_path_sees_a_changed_field_at_once() -> None:
    model = ScriptedChatModel(temperature=0.1)
    first = model_identity(model)
    model.temperature = 0.9
    assert model_identity(model)["llm_string"] == model._get_llm_string() != first["llm_string"]
    model.model_name = "other"
    assert model_identity(model)["model_id"] == "other"


def test_serializable_memo_is_used_and_follows_changes() -> None:
    model = SerializableScripted(temperature=0.1, replies=["a"])
    assert mi._path(SerializableScripted) == "serializable"
    first = mi.llm_string(model)
    assert first == model._get_llm_string() and '"temperature": 0.1' in first
    assert mi.llm_string(model) is first  # unchanged model: the remembered string
    model.temperature = 0.9
    changed = mi.llm_string(model)
    assert '"temperature": 0.9' in changed and changed == model._get_llm_string()
    model.replies.append("b")  # in place: the fingerprint sees it too
    assert '"b"' in mi.llm_string(model)


def test_langchains_own_string_is_stale_and_ours_is_not() -> None:
    """Why the memo checks a fingerprint: LangChain caches ``dumpd(model)`` once per object."""
    model = SerializableScripted(temperature=0.1)
    first = model._get_llm_string()
    model.temperature = 0.9
    assert model._get_llm_string() == first  # LangChain: stale
    assert '"temperature": 0.9' in mi.llm_string(model)


def test_bedrock_model_identity_follows_temperature() -> None:
    from langchain_aws import ChatBedrockConverse

    model = ChatBedrockConverse(
        model="anthropic.claude-3-haiku-20240307-v1:0",
        region_name="us-east-1",
        aws_access_key_id="AKIAEXAMPLE",
        aws_secret_access_key="example",
        temperature=0.1,
    )
    first = mi.llm_string(model)
    assert first == model._get_llm_string() and '"temperature": 0.1' in first
    assert mi.llm_string(model) is first
    model.temperature = 0.9
    assert '"temperature": 0.9' in mi.llm_string(model)


def test_bedrock_snapshot_sees_in_place_edits_and_ignores_the_client() -> None:
    from langchain_aws import ChatBedrockConverse

    model = ChatBedrockConverse(
        model="anthropic.claude-3-haiku-20240307-v1:0",
        region_name="us-east-1",
        aws_access_key_id="AKIAEXAMPLE",
        aws_secret_access_key="example",
        additional_model_request_fields={"top_k": 5},
    )
    first = mi.llm_string(model)
    assert '"top_k": 5' in first and mi.llm_string(model) is first
    model.additional_model_request_fields["top_k"] = 6  # same dict object, edited in place
    second = mi.llm_string(model)
    assert '"top_k": 6' in second
    model.__dict__.pop("_serialized", None)
    assert second == model._get_llm_string()
    snap = mi._MEMO[id(model)][1]
    # checked as JSON: the values that can change in place; the exclude=True fields (clients, metadata, profile)
    # never reach dumpd and are compared by identity only
    assert [snap.keys[i] for i in snap.mutable] == [
        "aws_access_key_id",
        "aws_secret_access_key",
        "additional_model_request_fields",
        "supports_tool_choice_values",
    ]
    model.metadata["lc_versions"]["langchain-aws"] = "0.0"
    assert mi.llm_string(model) is second and mi._MEMO[id(model)][1] is snap
    model.temperature = 0.4  # None -> float: a new object in a field
    assert '"temperature": 0.4' in mi.llm_string(model)


class _Named(ScriptedChatModel):
    @property
    def model_id(self) -> str:  # a property, not a field: must be read with getattr
        return "from-property"


class _Extras(ScriptedChatModel, extra="allow"):
    pass


def test_model_id_is_the_first_string_among_the_names() -> None:
    assert mi._model_id(ScriptedChatModel(model_name="m1")) == "m1"
    named = _Named(model_name="")  # "" is a string: it wins, as getattr order says
    assert mi._model_id(named) == ""
    named.__dict__.pop("model_name")
    assert mi._model_id(named) == "from-property"
    extra = _Extras(model="from-extra")
    extra.__dict__.pop("model_name")
    assert mi._lookups(_Extras) == (False, False, False) and mi._model_id(extra) == "from-extra"
    binding = ScriptedChatModel(model_name="bound-one").bind(stop=["x"])
    assert mi._lookups(type(binding)) == (True, True, True)  # RunnableBinding forwards attribute reads
    assert model_identity(binding)["model_id"] == "bound-one"

    class Plain:
        model = "plain-attr"

    assert mi._model_id(Plain()) == "plain-attr" and mi._model_id(object()) is None


@pytest.mark.parametrize("model_cls", [ScriptedChatModel, SerializableScripted])
def test_changing_temperature_on_the_same_model_after_a_call_misses(model_cls: type) -> None:
    model = model_cls(replies=["cold", "warm"], temperature=0.0)
    agent = create_agent(model, middleware=[ResponseCache(InMemoryServerCache())])

    def ask() -> AIMessage:
        return agent.invoke({"messages": [HumanMessage("Describe the weather.")]})["messages"][-1]

    assert (ask().content, model.calls) == ("cold", 1)
    assert ask().response_metadata["promptcache"]["cache"] == "hit" and model.calls == 1
    model.temperature = 0.8
    reply = ask()
    assert (reply.content, model.calls, reply.response_metadata["promptcache"]["cache"]) == ("warm", 2, "miss")
    assert ask().response_metadata["promptcache"]["cache"] == "hit" and model.calls == 2


# config ----------------------------------------------------------------------------------------------------------
def test_call_options_and_scope_read_once_and_restore_the_config() -> None:
    cache = ResponseCache(InMemoryServerCache())
    config = {"configurable": {"user_id": "u-1", "promptcache.response_cache": {"bust": True}}}
    token = var_child_runnable_config.set(config)
    try:
        assert cache._call_options_and_scope() == ({"bust": True}, "u-1")
        assert var_child_runnable_config.get() is config
        config["configurable"]["promptcache.response_cache"] = {"scope": "team-a"}
        assert cache._call_options_and_scope() == ({"scope": "team-a"}, "team-a")
    finally:
        var_child_runnable_config.reset(token)
    assert cache._call_options_and_scope() == ({}, None)


# entries ---------------------------------------------------------------------------------------------------------
def response() -> ModelResponse:
    ai = AIMessage(
        [{"type": "text", "text": "Sunny."}],
        id="run-1",
        response_metadata={"finish_reason": "stop", "promptcache": {"cache": "miss", "key": "k0"}},
        usage_metadata={
            "input_tokens": 10,
            "output_tokens": 3,
            "total_tokens": 13,
            "input_token_details": {"cache_read": 4},
        },
        tool_calls=[{"name": "Weather", "args": {"city": "Oslo"}, "id": "c1"}],
        additional_kwargs={"x": 1},
    )
    tool_msg = ToolMessage("Returning structured response", tool_call_id="c1", artifact={"a": 1})
    return ModelResponse(result=[ai, tool_msg], structured_response=Weather(city="Oslo"))


def test_entry_is_messages_to_dict_without_our_marker() -> None:
    stored = orjson.loads(encode_entry(response(), now=100.0))
    expected = messages_to_dict(response().result)
    del expected[0]["data"]["response_metadata"]["promptcache"]
    assert stored == {
        "v": 1,
        "created_at": 100.0,
        "messages": expected,
        "structured": {"type": "Weather", "data": {"city": "Oslo"}},
    }


def test_hit_is_built_from_the_entry() -> None:
    hit = decode_hit(encode_entry(response(), now=100.0), "k1", ToolStrategy(Weather), now=102.5)
    ai, tool_msg = hit.result
    assert ai.content == [{"type": "text", "text": "Sunny."}]
    assert ai.tool_calls == [{"name": "Weather", "args": {"city": "Oslo"}, "id": "c1", "type": "tool_call"}]
    assert ai.usage_metadata == {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    usage = {"input_tokens": 10, "output_tokens": 3, "total_tokens": 13, "input_token_details": {"cache_read": 4}}
    assert ai.response_metadata == {
        "finish_reason": "stop",
        "promptcache": {"cache": "hit", "key": "k1", "age_s": 2.5, "usage": usage},
    }
    assert ai.id.startswith("lc_run--") and tool_msg.id.startswith("lc_run--") and ai.id != tool_msg.id
    assert (tool_msg.tool_call_id, tool_msg.artifact) == ("c1", {"a": 1})
    assert hit.structured_response == Weather(city="Oslo")


def test_corrupt_usage_is_a_corrupt_entry() -> None:
    entry = orjson.loads(encode_entry(response()))
    entry["messages"][0]["data"]["usage_metadata"] = "lots"
    with pytest.raises(CorruptEntry, match="bad messages"):
        decode_hit(orjson.dumps(entry), "k")


# create_agent path ---------------------------------------------------------------------------------------------
def test_a_subclass_overriding_a_hook_still_has_it_called() -> None:
    seen: list[str] = []

    class Logged(ResponseCache):
        def process_request(self, request: Any) -> Any:
            out = super().process_request(request)
            seen.append(type(out).__name__)
            return out

    model = ScriptedChatModel(replies=["Paris."])
    agent = create_agent(model, middleware=[Logged(InMemoryServerCache())])
    replies = [agent.invoke({"messages": [HumanMessage("Capital of France?")]})["messages"][-1] for _ in range(2)]
    assert seen == ["ModelRequest", "ModelResponse"]
    assert [r.response_metadata["promptcache"]["cache"] for r in replies] == ["miss", "hit"] and model.calls == 1


async def test_async_agent_misses_then_hits_without_a_request_copy() -> None:
    model = ScriptedChatModel(replies=["Paris."])
    cache = InMemoryServerCache()
    agent = create_agent(model, middleware=[ResponseCache(cache)])
    first = (await agent.ainvoke({"messages": [HumanMessage("Capital of France?")]}))["messages"][-1]
    second = (await agent.ainvoke({"messages": [HumanMessage("Capital of France?")]}))["messages"][-1]
    assert (first.response_metadata["promptcache"]["cache"], second.response_metadata["promptcache"]["cache"]) == (
        "miss",
        "hit",
    )
    assert second.response_metadata["promptcache"]["key"] == first.response_metadata["promptcache"]["key"]
    assert (second.content, model.calls, len(cache)) == ("Paris.", 1, 1)

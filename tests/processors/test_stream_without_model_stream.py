"""``with_processors(model, ...).stream()`` works for a chat model that has no ``_stream`` of its own (LangChain's
``stream`` then falls back to ``invoke`` and yields a whole ``AIMessage``)."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from promptcache import InMemoryServerCache, ResponseCache, with_processors


class InvokeOnlyModel(BaseChatModel):
    """A chat model with only ``_generate`` (no ``_stream``/``_astream``): it counts its calls."""

    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "invoke-only"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.calls += 1
        reply = AIMessage(
            content=f"reply {self.calls}", usage_metadata={"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}
        )
        return ChatResult(generations=[ChatGeneration(message=reply)])


def test_stream_yields_the_reply_and_the_cache_stores_it():
    model = InvokeOnlyModel()
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    chunks = list(wrapped.stream("hi"))
    assert all(isinstance(c, AIMessageChunk) for c in chunks)
    assert "".join(c.content for c in chunks) == "reply 1"
    hit = wrapped.invoke("hi")
    assert (hit.content, hit.response_metadata["promptcache"]["cache"], model.calls) == ("reply 1", "hit", 1)


async def test_astream_yields_the_reply_and_the_cache_stores_it():
    model = InvokeOnlyModel()
    wrapped = with_processors(model, [ResponseCache(InMemoryServerCache())])
    chunks = [c async for c in wrapped.astream("hi")]
    assert "".join(c.content for c in chunks) == "reply 1"
    hit = await wrapped.ainvoke("hi")
    assert (hit.content, hit.response_metadata["promptcache"]["cache"], model.calls) == ("reply 1", "hit", 1)


def test_stream_without_processors_that_touch_the_call():
    model = InvokeOnlyModel()
    wrapped = with_processors(model, [])
    assert [c.content for c in wrapped.stream("hi")] == ["reply 1"]

"""Offline chat models for tests, examples and benchmarks (no network, no keys).

``ScriptedChatModel`` answers with a script of ``AIMessage`` replies, in order, and counts the real calls it
served, so a test can tell a cache hit (no call) from a miss. It supports ``bind_tools`` (tools are recorded and
the scripted tool calls are returned as given), ``stream``/``astream`` (content split into word chunks, tool calls
and usage on the last chunk) and per-instance identity fields that end up in ``_get_llm_string``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, cast

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from pydantic import ConfigDict, Field, PrivateAttr, SkipValidation

from promptcache._wrapped_model import BindableTool

if TYPE_CHECKING:
    from langchain_core.messages.ai import UsageMetadata

__all__ = ["ScriptedChatModel"]


class ScriptedChatModel(BaseChatModel):
    """A fake chat model replaying ``replies`` in order (cycling when ``cycle=True``).

    Args:
        replies: ``AIMessage`` objects or strings (a string becomes ``AIMessage(content=...)``).
        model_name: identity reported to caches (default ``"scripted"``).
        temperature: an invocation parameter, so caches keyed on settings see it.
        cycle: start over after the last reply instead of raising ``IndexError``.
        usage: when True (default), replies without ``usage_metadata`` get one (input = number of characters of
            the prompt // 4, output = characters of the reply // 4), like a real provider.
        error: an exception to raise on every call (to test failure paths).

    Attributes:
        calls: the number of model calls served (sync + async, invoke + stream).
        seen: the message lists received, one per call.
        bound_tools: the tools of the last ``bind_tools``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    replies: SkipValidation[list[str | AIMessage]] = Field(default_factory=list)  # used as given
    model_name: str = "scripted"
    temperature: float = 0.0
    cycle: bool = False
    usage: bool = True
    error: SkipValidation[BaseException | None] = None  # raised as given
    _index: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    calls: int = 0
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    bound_tools: SkipValidation[list[BindableTool]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "promptcache-scripted"

    @property
    def _identifying_params(self) -> dict[str, object]:
        return {"model_name": self.model_name, "temperature": self.temperature}

    def bind_tools(
        self, tools: Sequence[BindableTool], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the tools; the scripted replies decide the tool calls. Returns a binding carrying the tools."""
        self.bound_tools = list(tools)
        from langchain_core.utils.function_calling import convert_to_openai_tool

        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], tool_choice=tool_choice, **kwargs)

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        if self.error is not None:
            raise self.error
        with self._lock:
            if self._index >= len(self.replies):
                if not self.cycle or not self.replies:
                    raise IndexError(f"ScriptedChatModel ran out of replies after {self._index} calls")
                self._index = 0
            reply = self.replies[self._index]
            self._index += 1
            self.calls += 1
            self.seen.append(list(messages))
        msg = AIMessage(content=reply) if isinstance(reply, str) else reply.model_copy(deep=True)
        if self.usage and msg.usage_metadata is None:
            prompt_chars = sum(len(str(m.content)) for m in messages)
            i, o = max(1, prompt_chars // 4), max(1, len(str(msg.content)) // 4)
            msg.usage_metadata = cast("UsageMetadata", {"input_tokens": i, "output_tokens": o, "total_tokens": i + o})
        msg.response_metadata = {"model_name": self.model_name, "finish_reason": "stop", **msg.response_metadata}
        return msg

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])

    def _chunks(self, msg: AIMessage) -> list[AIMessageChunk]:
        text = msg.content if isinstance(msg.content, str) else ""
        parts = re.findall(r"\S+\s*|\s+", text) if text else []
        chunks = [AIMessageChunk(content=p) for p in parts]
        last = AIMessageChunk(
            content="" if isinstance(msg.content, str) else msg.content,
            tool_call_chunks=[
                {
                    "name": tc["name"],
                    "args": __import__("json").dumps(tc["args"]),
                    "id": tc.get("id"),
                    "index": i,
                    "type": "tool_call_chunk",
                }
                for i, tc in enumerate(msg.tool_calls)
            ],
            usage_metadata=msg.usage_metadata,
            response_metadata=msg.response_metadata,
            chunk_position="last",
        )
        return chunks + [last]

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(self._next(messages)):
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks(self._next(messages)):
            yield ChatGenerationChunk(message=chunk)

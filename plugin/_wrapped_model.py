"""``ProcessedChatModel``: a chat model with processors around it (what `with_processors` returns).

The wrapper builds the same ``ModelRequest`` that ``create_agent`` builds (system message apart, tools, tool
choice, settings) and runs the processors' hooks around the wrapped model, so a processor behaves the same in an
agent, a LangGraph node and an LCEL chain.

- ``invoke`` / ``ainvoke`` / ``batch``: the processors' ``wrap_model_call`` / ``awrap_model_call`` chain.
- ``stream`` / ``astream``: request hooks in order; then either the short-circuit reply (yielded as one chunk) or
  the wrapped model's chunks as they arrive; response hooks run, in reverse, once the stream has finished. A stream
  the consumer stops early never reaches the response hooks (so nothing half-finished is stored).
- The call's ``RunnableConfig`` is made current for the hooks, so ``ensure_config()`` (and therefore per-call
  options and scope) works even when the wrapper is called directly, outside a graph or chain.
- The wrapped model is called with the ``nostream`` tag so LangGraph's ``stream_mode="messages"`` sees each token
  once (from the wrapper), not twice.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from typing import Any, TypeAlias, Union, cast

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, AnyMessage, BaseMessage, SystemMessage, ToolCallChunk
from langchain_core.messages.utils import message_chunk_to_message
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import ConfigDict, SkipValidation

from promptcache._config import CurrentConfigMixin
from promptcache._processor import Processor, as_model_response, check_sync, request_stage

__all__ = ["ProcessedChatModel", "ai_message_to_chunk", "with_processors"]

_TOOLS = "_promptcache_tools"
_TOOL_CHOICE = "_promptcache_tool_choice"
_BIND_KWARGS = "_promptcache_bind_kwargs"
_INNER_CONFIG: RunnableConfig = {"tags": ["nostream"], "run_name": "promptcache.inner_model"}
# AgentMiddleware hooks that only create_agent's graph runs (with_processors refuses middleware relying on them)
_AGENT_HOOKS = (
    "before_agent",
    "abefore_agent",
    "before_model",
    "abefore_model",
    "after_model",
    "aafter_model",
    "after_agent",
    "aafter_agent",
)

BindableTool: TypeAlias = Union[dict[str, object], type, Callable[..., object], BaseTool]
"""What ``BaseChatModel.bind_tools`` takes as one tool: a JSON schema (OpenAI or Anthropic form), a pydantic or
TypedDict class, a function, or a LangChain tool."""


def ai_message_to_chunk(message: AIMessage) -> AIMessageChunk:
    """One ``AIMessageChunk`` equal to ``message`` once aggregated: content, name, tool calls and invalid tool calls
    (with their error text), usage, metadata.

    Invalid tool calls travel as tool-call chunks with their raw arguments (so a consumer adding chunks sees them),
    and the chunk's parsed ``invalid_tool_calls`` are then set to the message's own, which keep their ``error``.
    """
    calls: list[tuple[str | None, str | None, str | None]] = [
        (tc["name"], json.dumps(tc["args"]), tc.get("id")) for tc in message.tool_calls
    ]
    calls += [(tc.get("name"), tc.get("args"), tc.get("id")) for tc in message.invalid_tool_calls]
    chunk = AIMessageChunk(
        content=message.content,
        name=message.name,
        additional_kwargs=dict(message.additional_kwargs),
        response_metadata=dict(message.response_metadata),
        usage_metadata=message.usage_metadata,
        id=message.id,
        tool_call_chunks=[
            ToolCallChunk(name=name, args=args, id=id_, type="tool_call_chunk", index=i)
            for i, (name, args, id_) in enumerate(calls)
        ],
        chunk_position="last",
    )
    if message.invalid_tool_calls:
        chunk.invalid_tool_calls = [tc.copy() for tc in message.invalid_tool_calls]
    return chunk


class ProcessedChatModel(CurrentConfigMixin, BaseChatModel):
    """A ``BaseChatModel`` running ``processors`` around ``bound`` (see the module docstring)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    bound: BaseChatModel
    processors: SkipValidation[list[AgentMiddleware]]  # checked by `wrap` (its errors name the bad value)

    @classmethod
    def wrap(cls, model: BaseChatModel, processors: Iterable[AgentMiddleware]) -> ProcessedChatModel:
        """Validate and wrap; see `with_processors`."""
        if not isinstance(model, BaseChatModel):
            raise TypeError(f"model must be a BaseChatModel, got {type(model).__name__}: {model!r}")
        if isinstance(processors, (str, bytes)) or not hasattr(processors, "__iter__"):
            raise TypeError(f"processors must be a list of Processor/AgentMiddleware, got {processors!r}")
        middleware = list(processors)
        for p in middleware:
            if not isinstance(p, AgentMiddleware):
                raise TypeError(f"processors must be AgentMiddleware/Processor instances, got {p!r}")
            agent_hooks = [h for h in _AGENT_HOOKS if getattr(type(p), h) is not getattr(AgentMiddleware, h)]
            if agent_hooks:
                raise TypeError(
                    f"{type(p).__name__} uses {', '.join(agent_hooks)}, which only create_agent runs; "
                    "around a plain chat model only wrap_model_call runs, so it would silently do "
                    "nothing (for typed memory in a LangGraph graph use MemoryNode and "
                    "with_memory_prompt)"
                )
        return cls(bound=model, processors=middleware)

    # -- identity ------------------------------------------------------------------------------------------
    @property
    def _llm_type(self) -> str:
        return f"promptcache:{self.bound._llm_type}"

    @property
    def _identifying_params(self) -> dict[str, object]:
        return dict(self.bound._identifying_params)

    def bind_tools(
        self, tools: Sequence[BindableTool], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools: they reach the processors as ``request.tools`` and the wrapped model's own ``bind_tools``."""
        return self.bind(**{_TOOLS: list(tools), _TOOL_CHOICE: tool_choice, _BIND_KWARGS: kwargs})

    # -- request building ----------------------------------------------------------------------------------
    def _request(self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]) -> ModelRequest:
        settings = dict(kwargs)
        tools = settings.pop(_TOOLS, None) or []
        tool_choice = settings.pop(_TOOL_CHOICE, None)
        bind_kwargs = settings.pop(_BIND_KWARGS, None) or {}
        if stop is not None:
            settings["stop"] = stop
        system = None
        # The messages a chat model receives are the AnyMessage kinds (BaseMessage is their common base).
        rest = cast("list[AnyMessage]", list(messages))
        if rest and isinstance(rest[0], SystemMessage):
            system, rest = rest[0], rest[1:]
        settings.update({f"{_BIND_KWARGS}:{k}": v for k, v in bind_kwargs.items()})
        return ModelRequest(
            model=self.bound,
            messages=rest,
            system_message=system,
            tool_choice=tool_choice,
            tools=tools,
            response_format=None,
            state=cast("AgentState[Any]", {"messages": list(messages)}),  # a model call's state: its messages
            runtime=None,
            model_settings=settings,
        )

    @staticmethod
    def _runnable(request: ModelRequest) -> tuple[Runnable[LanguageModelInput, AIMessage], list[BaseMessage]]:
        settings = dict(request.model_settings)
        bind_kwargs = {k.split(":", 1)[1]: settings.pop(k) for k in list(settings) if k.startswith(f"{_BIND_KWARGS}:")}
        model: Runnable[LanguageModelInput, AIMessage] = request.model
        if request.tools:
            extra = {"tool_choice": request.tool_choice} if request.tool_choice is not None else {}
            model = request.model.bind_tools(request.tools, **extra, **bind_kwargs)
        if settings:
            model = model.bind(**settings)
        messages: list[BaseMessage] = [request.system_message] if request.system_message else []
        messages.extend(request.messages)
        return model, messages

    def _call(self, request: ModelRequest) -> ModelResponse:
        model, messages = self._runnable(request)
        return ModelResponse(result=[model.invoke(messages, config=_INNER_CONFIG)], structured_response=None)

    async def _acall(self, request: ModelRequest) -> ModelResponse:
        model, messages = self._runnable(request)
        return ModelResponse(result=[await model.ainvoke(messages, config=_INNER_CONFIG)], structured_response=None)

    @staticmethod
    def _reply(response: ModelResponse) -> AIMessage:
        messages = [m for m in response.result if isinstance(m, AIMessage)]
        if not messages:
            raise ValueError(f"processors produced no AIMessage: {response.result!r}")
        return messages[-1]

    @classmethod
    def _result(cls, response: ModelResponse) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=cls._reply(response))])

    # -- invoke / ainvoke ----------------------------------------------------------------------------------
    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._result(self._generate_from(self._request(messages, stop, kwargs)))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._result(await self._agenerate_from(self._request(messages, stop, kwargs)))

    # -- stream / astream ----------------------------------------------------------------------------------
    def _hooks_only(self) -> list[Processor] | None:
        """The processors, when every one is a `Processor` whose wrap methods only run its hooks: then ``stream``
        runs the hooks itself and streams the model's own chunks; otherwise (``None``) it runs the wrap methods (a
        guard, a retry, any ``AgentMiddleware``) and yields the reply as one chunk."""
        hooked = [p for p in self.processors if isinstance(p, Processor) and p._wrap_runs_hooks]
        return hooked if len(hooked) == len(self.processors) else None

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        request = self._request(messages, stop, kwargs)
        processors = self._hooks_only()
        if processors is None:
            yield ChatGenerationChunk(message=ai_message_to_chunk(self._reply(self._generate_from(request))))
            return
        for p in processors:
            if p._async_only:
                check_sync(p)
        sent: list[tuple[Processor, ModelRequest]] = []
        short: ModelResponse | None = None
        for p in processors:
            out = request_stage(p, p.process_request(request))
            if isinstance(out, ModelResponse):
                short = out
                break
            sent.append((p, out))
            request = out
        if short is None:
            model, msgs = self._runnable(request)
            chunks: list[AIMessageChunk] = []
            for chunk in model.stream(msgs, config=_INNER_CONFIG):
                chunk = _as_chunk(chunk)
                chunks.append(chunk)
                yield ChatGenerationChunk(message=chunk)
            response = ModelResponse(result=[_aggregate(chunks)], structured_response=None)
        else:
            response = short
        for p, req in reversed(sent):
            response = as_model_response(p.process_response(req, response))
        if short is not None:
            yield ChatGenerationChunk(message=ai_message_to_chunk(self._reply(response)))

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        request = self._request(messages, stop, kwargs)
        processors = self._hooks_only()
        if processors is None:
            yield ChatGenerationChunk(message=ai_message_to_chunk(self._reply(await self._agenerate_from(request))))
            return
        sent: list[tuple[Processor, ModelRequest]] = []
        short: ModelResponse | None = None
        for p in processors:
            out = request_stage(p, await p.aprocess_request(request), "aprocess_request")
            if isinstance(out, ModelResponse):
                short = out
                break
            sent.append((p, out))
            request = out
        if short is None:
            model, msgs = self._runnable(request)
            chunks: list[AIMessageChunk] = []
            async for chunk in model.astream(msgs, config=_INNER_CONFIG):
                chunk = _as_chunk(chunk)
                chunks.append(chunk)
                yield ChatGenerationChunk(message=chunk)
            response = ModelResponse(result=[_aggregate(chunks)], structured_response=None)
        else:
            response = short
        for p, req in reversed(sent):
            response = as_model_response(await p.aprocess_response(req, response))
        if short is not None:
            yield ChatGenerationChunk(message=ai_message_to_chunk(self._reply(response)))

    def _generate_from(self, request: ModelRequest) -> ModelResponse:
        handler: Callable[[ModelRequest], ModelResponse] = self._call
        for p in reversed(self.processors):
            handler = (lambda proc, inner: lambda req: as_model_response(proc.wrap_model_call(req, inner)))(p, handler)
        return handler(request)

    async def _agenerate_from(self, request: ModelRequest) -> ModelResponse:
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]] = self._acall
        for p in reversed(self.processors):

            async def step(
                req: ModelRequest,
                proc: AgentMiddleware = p,
                inner: Callable[[ModelRequest], Awaitable[ModelResponse]] = handler,
            ) -> ModelResponse:
                return as_model_response(await proc.awrap_model_call(req, inner))

            handler = step
        return await handler(request)


def _as_chunk(message: AIMessage) -> AIMessageChunk:
    """A streamed message as an ``AIMessageChunk``: a model without its own ``_stream`` makes LangChain's ``stream``
    fall back to ``invoke`` and yield the whole ``AIMessage`` (``ChatGenerationChunk`` accepts chunks only)."""
    return message if isinstance(message, AIMessageChunk) else ai_message_to_chunk(message)


def _aggregate(chunks: list[AIMessageChunk]) -> AIMessage:
    if not chunks:
        return AIMessage(content="")
    total = chunks[0]
    for c in chunks[1:]:
        total = total + c
    return cast(AIMessage, message_chunk_to_message(total))  # the message of an AIMessageChunk


# ---------------------------------------------------------------------------------------------------------------
# with_processors: the same processors around a plain chat model (LangGraph nodes, LCEL chains)
# ---------------------------------------------------------------------------------------------------------------
def with_processors(model: BaseChatModel, processors: Iterable[AgentMiddleware]) -> BaseChatModel:
    """Wrap a ``BaseChatModel`` so ``processors`` run around each of its calls, as in ``create_agent``.

    Args:
        model: any ``langchain_core`` ``BaseChatModel`` (not a bound ``Runnable``: bind tools on the wrapper).
        processors: a sequence of `Processor` (plain ``AgentMiddleware`` with ``wrap_model_call`` also work
            for ``invoke``; they make ``stream`` yield the whole reply as one chunk).

    Returns:
        A ``BaseChatModel`` (`ProcessedChatModel`) with ``invoke``, ``ainvoke``,
        ``stream``, ``astream``, ``batch``, ``bind_tools`` and ``with_structured_output``.

    Raises:
        TypeError: ``model`` is not a ``BaseChatModel`` or a processor is not an ``AgentMiddleware``.
    """
    return ProcessedChatModel.wrap(model, processors)

"""``CurrentConfigMixin``: a chat model that makes the call's ``RunnableConfig`` current while the call runs.

Per-call options, the scope and the ``thread_id`` are read from the current config (`promptcache._config`);
LangChain makes a config current inside graphs and chains only, so a model called directly needs this mixin.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any, cast

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config, set_config_context
from langchain_core.runnables.utils import coro_with_context

if TYPE_CHECKING:
    from langchain_core.language_models import LanguageModelInput
    from langchain_core.messages import AIMessage, AIMessageChunk

__all__ = ["CurrentConfigMixin"]


def _context_config(config: RunnableConfig) -> RunnableConfig:
    """The config made current for the calls inside: the caller's ``run_id`` names the outer run only (a model
    called inside must start its own run, or tracers see one id twice)."""
    if "run_id" not in config:
        return config
    return cast(RunnableConfig, {k: v for k, v in config.items() if k != "run_id"})


class CurrentConfigMixin:
    """Mixin for a chat model: make the call's ``RunnableConfig`` current while the call runs.

    LangChain sets the current config (read by ``ensure_config()``) inside graphs and chains, but not when a chat
    model is called directly (``model.invoke(x, config=...)``). Hooks that read per-call options, the scope or the
    ``thread_id`` need it either way; this mixin sets it for ``invoke``, ``ainvoke``, ``stream`` and ``astream``
    (``batch``/``abatch`` go through ``invoke``/``ainvoke``). Put it before the model class in the bases.
    """

    # The ``type: ignore[misc]`` below: mypy cannot see that the model class after this mixin in the bases defines
    # ``invoke``/``ainvoke``/``stream``/``astream`` (a mixin's ``super()`` is only known in the final class).
    # ``**kwargs: Any``: the chat model's own signature (``BaseChatModel.invoke``), passed on unchanged.
    def invoke(self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any) -> AIMessage:
        config = ensure_config(config)
        with set_config_context(_context_config(config)) as ctx:
            return cast("AIMessage", ctx.run(super().invoke, input, config, **kwargs))  # type: ignore[misc]

    async def ainvoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AIMessage:
        config = ensure_config(config)
        with set_config_context(_context_config(config)) as ctx:
            reply = await coro_with_context(super().ainvoke(input, config, **kwargs), ctx)  # type: ignore[misc]
            return cast("AIMessage", reply)

    def stream(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[AIMessageChunk]:
        config = ensure_config(config)
        with set_config_context(_context_config(config)) as ctx:
            iterator = super().stream(input, config, **kwargs)  # type: ignore[misc]
            while True:
                try:
                    chunk = ctx.run(next, iterator)
                except StopIteration:
                    return
                yield chunk

    async def astream(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[AIMessageChunk]:
        config = ensure_config(config)
        with set_config_context(_context_config(config)) as ctx:
            iterator = super().astream(input, config, **kwargs)  # type: ignore[misc]
            try:
                while True:
                    try:
                        chunk = await coro_with_context(iterator.__anext__(), ctx)
                    except StopAsyncIteration:
                        return
                    yield chunk
            finally:
                await iterator.aclose()

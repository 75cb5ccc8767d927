"""Bedrock cache points on real Converse requests: ``CachePointChatBedrockConverse`` and ``BedrockCachePoints``.

``CachePointChatBedrockConverse`` is a ``langchain_aws.ChatBedrockConverse`` whose final Converse request (system,
messages, ``toolConfig.tools``) gets cache points from a placement strategy: ``strategy="anchored-tail"``
(`promptcache.cache_points.AnchoredTailStrategy`, the default) or ``"multi-point"``
(`promptcache.cache_points.MultiPointStrategy`, Roo-Code's), or any ``CacheStrategy`` subclass.

Why the default is not the multi-point strategy: the replay measured both on real
agent traffic -- tau-bench airline, 200 conversations, 2,454 requests, 10 s apart (bench/README.md "## Replay",
``python bench/replay_tau_bench.py``). Input-side cost relative to no caching: Claude Sonnet 4, anchored-tail 17.5%
vs multi-point 29.1% (multi-point costs 1.66x more); Nova Pro 32.7% vs 46.2%. Multi-point leaves each request's
newest messages uncovered until they outweigh a gap (978k of 6.6M tokens billed at full price); anchored-tail's
moving tail makes every request read what the previous one sent. Roo-Code's strategy stays one option away.
The hook is langchain-aws' own ``_apply_cache_points(cache_control, system, bedrock_messages, params)``: both
``_generate`` and ``_stream`` call it once the request is fully built (after ``_messages_to_bedrock`` and
``_converse_params``), so ``invoke``, ``ainvoke``, ``stream``, ``astream``, ``batch`` and ``bind_tools`` all go
through it. The lists it receives are built fresh for each call, so points never reach the caller's messages,
graph state or checkpoints; nor does langchain-aws' trimming of a final ``AIMessage`` (`_bedrock_inputs`). (langchain-aws' own placement there -- system + last message + tools when
``cache_control`` is passed -- is replaced; ``cache_control={"ttl": "1h"}`` still selects the TTL.)

Placements are remembered per conversation (the call's ``configurable["thread_id"]``, else a hash of the system
prompt and first message) in a ``ServerCache`` -- in-memory by default, ``RedisCache`` so several workers agree --
under ``{<conversation>}:<model hash>`` in the store's ``placements:`` namespace (`ServerCache.namespaced`: a
``RedisCache`` keeps them at ``<prefix>placements:...``, apart from its own entries, so its ``clear()`` spares them;
a Redis Cluster hash tag per conversation). A store that fails
is a miss (logged at most once a minute): the call goes on.

Usage: langchain-aws already reports ``usage_metadata.input_token_details`` ``cache_read`` / ``cache_creation`` from
Converse ``cacheReadInputTokens`` / ``cacheWriteInputTokens`` (and adds both to ``input_tokens``); this module adds
nothing to it, so nothing is counted twice.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, Optional, Union, cast

from cachetools import LRUCache

from promptcache._errors import missing_extra
from promptcache._option_checks import check_bool

try:
    from langchain_aws import ChatBedrockConverse
except ImportError as exc:  # the optional dependency of this module
    raise missing_extra("bedrock", exc) from exc
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, PrivateAttr, SkipValidation, StrictBool, StrictFloat, StrictInt, model_validator

from promptcache._config import CurrentConfigMixin
from promptcache._log import ThrottledWarning
from promptcache._metrics import PluginMetrics, PluginStats
from promptcache._processor import ModelRequest, Processor
from promptcache._savings import count_cache_usage, count_stream_usage
from promptcache.backends import ServerCache
from promptcache.cache_points import CacheStrategy, ModelInfo, get_model_info
from promptcache.cache_points._converse import ConversePlan, place_cache_points
from promptcache.cache_points._model_info import TTLS
from promptcache.cache_points._prefix_counts import RECENT_COUNTS, RecentCounts
from promptcache.integrations._bedrock_conversation import conversation_id
from promptcache.integrations._bedrock_inputs import detach_final_reply
from promptcache.integrations._bedrock_options import StrategyName, check_cache_control, resolve_strategy
from promptcache.integrations._bedrock_placements import DEFAULT_PLACEMENT_TTL_SECONDS, PlacementStore

__all__ = [
    "DEFAULT_PLACEMENT_TTL_SECONDS",
    "BedrockCachePoints",
    "CachePointChatBedrockConverse",
    "PlacementStore",
    "StrategyName",
]

logger = logging.getLogger("promptcache.integrations.bedrock")
_MAX_WRAPPED = 256  # cache-point twins kept per BedrockCachePoints (one per base model object in use)


class _RequestState:
    """What `CachePointChatBedrockConverse` reads on every request, in one plain object.

    Kept in the model's instance ``__dict__`` under `_STATE` as well as in its pydantic private attributes: reading a
    private attribute goes through pydantic's ``__getattr__`` after a failed lookup along the model's long MRO
    (its cost is a row of ``python bench/cache_points.py --breakdown 200``, bench/README.md "## Cache points"); a
    key of ``__dict__`` is a plain dict lookup.
    """

    __slots__ = ("counts", "info", "last_plan", "metrics", "retired", "store", "strategy")

    def __init__(
        self,
        info: ModelInfo,
        store: PlacementStore,
        strategy: type[CacheStrategy],
        counts: RecentCounts,
        metrics: PluginMetrics,
    ):
        self.info, self.store, self.strategy, self.counts, self.metrics = info, store, strategy, counts, metrics
        self.last_plan: Optional[ConversePlan] = None
        # The plan (and kept counts) a request replaced: it holds the previous request's message dicts, so dropping
        # it frees that request. Kept here until the call returns (`CachePointChatBedrockConverse._generate` /
        # ``_stream``), so the free happens after the response instead of before the request is sent.
        self.retired: object = None


_STATE = "_request_state"  # the key of the `_RequestState` in a model's instance ``__dict__``


class CachePointChatBedrockConverse(CurrentConfigMixin, ChatBedrockConverse):
    """``ChatBedrockConverse`` that places Bedrock cache points on every request (see the module docstring).

    Extra fields:
        strategy: ``"anchored-tail"`` (default: anchor after tools/system, a tail point at the end of each request,
            a bridge past Bedrock's 20-block lookback; 17.5% of uncached cost on tau-bench vs 29.1% for
            multi-point), ``"multi-point"`` (Roo-Code's strategy), or a
            ``CacheStrategy`` subclass.
        cache_points: ``False`` turns placement off (langchain-aws' own ``cache_control`` handling then applies).
        cache_ttl: ``None``/``"5m"`` or ``"1h"``; checked against the model (``ValueError`` if not allowed).
        cache_model_info: a `ModelInfo` to use instead of the table entry for ``base_model_id``/``model_id``
            (e.g. ``get_model_info(id, min_tokens_per_cache_point=2048)``, or for an application inference profile).
        cache_tools: ``False`` never adds a point after the tools.
        placement_store: a ``ServerCache`` for placements (default: a private ``InMemoryServerCache``).
        placement_ttl_s: seconds placements are kept (default one day).
        token_counter: ``count_tokens(message) -> int`` for Converse messages (default tiktoken, offline).

    Raises:
        ValueError: ``cache_ttl`` not allowed for the model, or an unknown ``strategy`` name; TypeError: a store that
            is not a ``ServerCache``, or a ``strategy`` that is not a name or a ``CacheStrategy`` subclass.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, arbitrary_types_allowed=True)

    # Checked by ``resolve_strategy`` (its messages name the known strategies), not by pydantic.
    strategy: SkipValidation[StrategyName | type[CacheStrategy]] = "anchored-tail"
    cache_points: StrictBool = True
    cache_ttl: Optional[str] = None
    cache_model_info: Optional[ModelInfo] = None
    cache_tools: StrictBool = True
    # Checked by ``PlacementStore`` (a TypeError naming the value), not by pydantic.
    placement_store: SkipValidation[Optional[ServerCache]] = None
    placement_ttl_s: Optional[Union[StrictInt, StrictFloat]] = DEFAULT_PLACEMENT_TTL_SECONDS
    token_counter: Optional[Callable[[Any], int]] = None

    _store: PlacementStore = PrivateAttr()
    _info: ModelInfo = PrivateAttr()
    _strategy: type[CacheStrategy] = PrivateAttr()
    _counts: RecentCounts = PrivateAttr(default_factory=lambda: RECENT_COUNTS)  # shared by the process
    _hot: _RequestState = PrivateAttr()
    _metrics: PluginMetrics = PrivateAttr(default_factory=lambda: PluginMetrics("cache_points"))

    @model_validator(mode="after")
    def _setup_cache_points(self) -> CachePointChatBedrockConverse:
        self._info = self.cache_model_info or get_model_info(self.base_model_id or self.model_id)
        self._info.check_ttl(self.cache_ttl)
        self._strategy = resolve_strategy(self.strategy)
        self._store = PlacementStore(self.placement_store, self.placement_ttl_s)
        self._hot = _RequestState(self._info, self._store, self._strategy, self._counts, self._metrics)
        object.__setattr__(self, _STATE, self._hot)  # not a field: pydantic neither validates nor dumps it
        self._use_metrics(self._metrics)
        return self

    @property
    def _state(self) -> _RequestState:
        """The `_RequestState`, read from the instance ``__dict__`` (see `_RequestState`)."""
        return cast(_RequestState, self.__dict__[_STATE])

    def _use_metrics(self, metrics: PluginMetrics) -> None:
        self._metrics = self._store.metrics = self._state.metrics = metrics

    def stats(self, reset: bool = False) -> PluginStats:
        """Counts from each reply's ``usage_metadata.input_token_details``: ``hits`` (calls that read from the
        prompt cache), ``misses`` (calls that did not), ``writes`` (calls that wrote to it), cache read/write tokens,
        ``input_tokens_saved`` (tokens read from the cache, billed at the read price instead of the input price),
        ``dollars_saved`` (reads saved minus what writes cost above the input price, per
        `promptcache._pricing`, at the write tier of ``cache_ttl``; models in its table only), and
        ``errors`` (placement store failures). Also sent to OpenTelemetry (`promptcache._metrics`)."""
        return self._metrics.snapshot(reset)

    def _cache_usage_args(self) -> tuple[str, float]:
        return self._state.info.model_id or self.model_id, 3600.0 if self.cache_ttl == "1h" else 300.0

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        try:
            result = super()._generate(detach_final_reply(messages), *args, **kwargs)
        finally:
            self._state.retired = None  # the previous request, freed now that this one is done (`_RequestState`)
        metrics, usage_args = self._state.metrics, self._cache_usage_args()
        for generation in result.generations:  # invoke/ainvoke/batch (async runs this in a thread)
            count_cache_usage(metrics, getattr(generation.message, "usage_metadata", None), *usage_args)
        return result

    def _stream(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        stream = super()._stream(detach_final_reply(messages), *args, **kwargs)
        try:
            yield from count_stream_usage(self._state.metrics, stream, *self._cache_usage_args())
        finally:
            self._state.retired = None  # the previous request, freed now that this one is done (`_RequestState`)

    @property
    def caches_prompts(self) -> bool:
        """Hook for typed memory (``TypedMemoryMiddleware(prompt_caching=...)``): True when this model places
        cache points, so the memory load decision counts the cache writes a changed memory block causes."""
        return self.cache_points

    @property
    def cache_model(self) -> ModelInfo:
        """The `ModelInfo` in use."""
        return self._info

    @property
    def last_plan(self) -> Optional[ConversePlan]:
        """The most recent request's `ConversePlan` (for logging and examples; not thread-local)."""
        return self._state.last_plan

    # -- the hook langchain-aws calls with the final request ---------------------------------------------------
    # ``cache_control`` is langchain-aws' per-call option (``model.invoke(..., cache_control={"ttl": "1h"})``); here
    # only its ``ttl`` is read. Checked first (TypeError / ValueError naming it), so nothing is sent on bad input.
    def _apply_cache_points(
        self,
        cache_control: Optional[dict[str, object]],
        system: list[dict[str, object]],
        bedrock_messages: list[dict[str, object]],
        params: Optional[dict[str, object]] = None,
    ) -> None:
        check_cache_control(cache_control)
        if not self.cache_points or (self.raw_blocks is not None and bedrock_messages is self.raw_blocks):
            return super()._apply_cache_points(cache_control, system, bedrock_messages, params)
        hot = self._state
        asked = (cache_control or {}).get("ttl")  # None or "5m" / "1h" (checked above)
        ttl = asked if isinstance(asked, str) and asked else self.cache_ttl
        tool_config = (params or {}).get("toolConfig")  # a dict whenever ``tools`` is not None
        tools = tool_config.get("tools") if isinstance(tool_config, dict) else None
        counter = self.token_counter
        conv = conversation_id(system, bedrock_messages)
        model_key = hot.info.model_id or self.model_id
        previous = hot.store.load(conv, model_key)
        previous_counts = hot.counts.get(conv) if counter is None else None
        plan = place_cache_points(
            hot.info,
            system,
            bedrock_messages,
            tools,
            previous_placements=previous,
            ttl=ttl,
            count_tokens=counter,
            cache_tools=self.cache_tools,
            strategy=hot.strategy,
            previous_counts=previous_counts,
        )
        if counter is None:
            hot.counts.put(conv, plan.counted)
        system[:] = cast("list[dict[str, object]]", plan.system)  # the scan checked every block is a dict
        bedrock_messages[:] = plan.messages
        if tools is not None and params is not None and isinstance(tool_config, dict):
            params["toolConfig"] = {**tool_config, "tools": plan.tools}
        if plan.placements != previous or [p.fingerprint for p in plan.placements] != [p.fingerprint for p in previous]:
            hot.store.save(conv, model_key, plan.placements)
        hot.retired, hot.last_plan = (hot.last_plan, previous_counts), plan  # freed once the call returns
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "cache points for %s: tools=%s system=%s messages=%s",
                conv,
                plan.tools_point,
                plan.system_point,
                [p.index for p in plan.placements],
            )

    @classmethod
    def from_model(cls, model: ChatBedrockConverse, **options: Any) -> CachePointChatBedrockConverse:
        """A cache-point model with the same settings and boto3 clients as ``model``.

        Args:
            model: a configured ``ChatBedrockConverse``.
            **options: this class's extra fields (``cache_ttl``, ``placement_store``, ...).
        """
        fields = {
            name: getattr(model, name) for name in model.model_fields_set if name in ChatBedrockConverse.model_fields
        }
        fields.update(client=model.client, bedrock_client=model.bedrock_client)
        return cls(**fields, **options)


class BedrockCachePoints(Processor):
    """The cache-point placement as a processor for ``create_agent`` / ``with_processors``.

    Each request whose model is a ``ChatBedrockConverse`` is sent through a `CachePointChatBedrockConverse`
    sharing its clients and settings, so the points go on the final Converse request and never into the agent's
    messages, state or checkpoints. Other models pass through (one warning). The twin is built on a model's first
    request and rebuilt whenever one of the model's settings changed since (``model.temperature = 0.9`` reaches the
    next request); see `wrap`.

    Args:
        strategy: ``"anchored-tail"`` (default; cheapest in the replay), ``"multi-point"`` or a ``CacheStrategy``
            subclass (see `CachePointChatBedrockConverse`).
        placement_store: ``ServerCache`` for placements (default: in-memory, shared by this processor's models).
        cache_ttl: as on `CachePointChatBedrockConverse`.
        cache_model_info: as on `CachePointChatBedrockConverse`.
        cache_tools: as on `CachePointChatBedrockConverse`.
        placement_ttl_s: as on `CachePointChatBedrockConverse`.
        token_counter: as on `CachePointChatBedrockConverse`.

    Raises:
        ValueError: (also TypeError) bad options: a bad ``strategy`` at once; the rest when the first Bedrock model
            is wrapped; a TTL given with ``cache_model_info`` is checked at once.
    """

    def __init__(
        self,
        *,
        strategy: StrategyName | type[CacheStrategy] = "anchored-tail",
        placement_store: ServerCache | None = None,
        cache_ttl: str | None = None,
        cache_model_info: ModelInfo | None = None,
        cache_tools: bool = True,
        placement_ttl_s: float | None = DEFAULT_PLACEMENT_TTL_SECONDS,
        token_counter: Callable[[Any], int] | None = None,
    ) -> None:
        super().__init__()
        check_bool(cache_tools, "cache_tools")
        if token_counter is not None and not callable(token_counter):
            raise TypeError(
                f"token_counter must be a callable count_tokens(message) -> int or None, got {token_counter!r}"
            )
        if cache_model_info is not None and not isinstance(cache_model_info, ModelInfo):
            raise TypeError(f"cache_model_info must be a ModelInfo (get_model_info(...)), got {cache_model_info!r}")
        if cache_ttl is not None and cache_ttl not in TTLS:
            raise ValueError(f"cache_ttl must be one of {list(TTLS)} or None, got {cache_ttl!r}")
        if cache_model_info is not None:
            cache_model_info.check_ttl(cache_ttl)
        resolve_strategy(strategy)
        self._options = dict(
            strategy=strategy,
            placement_store=PlacementStore(placement_store, placement_ttl_s).backend,
            cache_ttl=cache_ttl,
            cache_model_info=cache_model_info,
            cache_tools=cache_tools,
            placement_ttl_s=placement_ttl_s,
            token_counter=token_counter,
        )
        # id(model) -> (model, settings snapshot, twin); bounded, so models made per request are not kept forever
        self._wrapped: LRUCache[int, tuple[ChatBedrockConverse, tuple[object, ...], CachePointChatBedrockConverse]] = (
            LRUCache(maxsize=_MAX_WRAPPED)
        )
        self._wrapped_lock = threading.Lock()
        self._warning = ThrottledWarning(logger, interval_s=3600)
        self.metrics = PluginMetrics("cache_points")

    caches_prompts = True
    """Hook for typed memory (``TypedMemoryMiddleware(prompt_caching=<this processor>)``): the requests this
    processor handles are prompt-cached, so the memory load decision counts cache writes."""

    def stats(self, reset: bool = False) -> PluginStats:
        """The counts of every model this processor wrapped (as `CachePointChatBedrockConverse.stats`)."""
        return self.metrics.snapshot(reset)

    def wrap(self, model: ChatBedrockConverse) -> CachePointChatBedrockConverse:
        """The cache-point twin of ``model``, following its current settings.

        Kept per model instance (the last ``_MAX_WRAPPED`` = 256 models used) with a snapshot of the model's fields (values, and the contents of dict/list values
        such as ``model_kwargs``); every call compares a fresh snapshot (a few microseconds) and rebuilds the twin
        when anything differs, so a setting changed after the first call is never lost. The placement store is the
        processor's, so a rebuilt twin keeps every conversation's placements.
        """
        state = _settings_snapshot(model)
        with self._wrapped_lock:
            entry = self._wrapped.get(id(model))
        if entry is None or entry[0] is not model or entry[1] != state:
            entry = (model, state, CachePointChatBedrockConverse.from_model(model, **self._options))
            entry[2]._use_metrics(self.metrics)
            with self._wrapped_lock:
                self._wrapped[id(model)] = entry
        return entry[2]

    def process_request(self, request: ModelRequest) -> ModelRequest:
        """Swap the model for its cache-point twin (a new request; messages untouched)."""
        model = request.model
        if isinstance(model, CachePointChatBedrockConverse):
            return request
        if not isinstance(model, ChatBedrockConverse):
            self._warning.warn("promptcache: BedrockCachePoints ignores non-Bedrock model %s", type(model).__name__)
            return request
        return request.override(model=self.wrap(model))


def _frozen(value: object) -> object:
    """``value`` with dicts and lists turned into tuples (recursively), so a later in-place change compares unequal."""
    if isinstance(value, dict):
        return ("dict", tuple((k, _frozen(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_frozen(v) for v in value))
    return value


def _settings_snapshot(model: ChatBedrockConverse) -> tuple[object, ...]:
    """Every field of ``model`` (``_frozen``), in field order: what ``CachePointChatBedrockConverse.from_model``
    reads."""
    return tuple(_frozen(getattr(model, name, None)) for name in type(model).model_fields)

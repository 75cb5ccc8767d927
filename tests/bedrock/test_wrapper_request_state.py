"""The wrapper's per-request state lives outside its pydantic fields and follows the model's metrics.

``CachePointChatBedrockConverse`` reads what it needs on every request (model info, placement store, strategy, kept
counts, metrics) from one object kept in the instance ``__dict__``: it is never dumped or validated as a field, a
processor's metrics reach it, and a reply's cache usage is counted through it.
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage, SystemMessage
from support.bedrock import CLAUDE, SYSTEM, client_and_stub, converse_response, words

from promptcache._metrics import PluginMetrics
from promptcache.integrations.bedrock import CachePointChatBedrockConverse


def _model() -> tuple[CachePointChatBedrockConverse, object]:
    client, stub = client_and_stub()
    return CachePointChatBedrockConverse(model=CLAUDE, client=client, region_name="us-east-1"), stub


def test_the_state_is_not_a_field() -> None:
    model, _ = _model()
    assert "_request_state" not in model.model_dump()
    assert "_request_state" not in repr(model)
    assert model._state.info is model.cache_model and model._state.store is model._store


def test_metrics_set_later_reach_the_state_and_count_usage() -> None:
    model, stub = _model()
    metrics = PluginMetrics("cache_points")
    model._use_metrics(metrics)
    assert model._state.metrics is metrics and model._store.metrics is metrics
    stub.add_response("converse", converse_response(words("a", 5), read=2000, write=0), None)  # type: ignore[attr-defined]
    with stub:  # type: ignore[attr-defined]
        model.invoke([SystemMessage(SYSTEM), HumanMessage(words("u", 20))])
    stats = model.stats()
    assert (stats.hits, stats.misses, stats.cache_read_tokens) == (1, 0, 2000)
    assert model.last_plan is not None and model.last_plan is model._state.last_plan

"""``CachePointChatBedrockConverse`` with the default counter counts only what each request of a conversation adds,
and sends the same requests as a model that counts every message every time.

Real boto3 client + botocore Stubber; the requests are taken as botocore builds them. The reference model is given
``token_counter=default_count_tokens`` (the same counts, passed as a custom counter, so nothing is reused).
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from support.bedrock import CLAUDE, SYSTEM, client_and_stub, converse_response, words

import promptcache.cache_points._request_scan as scan_module
from promptcache.cache_points import default_count_tokens, get_model_info
from promptcache.integrations.bedrock import CachePointChatBedrockConverse

TURNS = 6


def _conversation(monkeypatch: Any, **options: Any) -> tuple[list[dict[str, Any]], list[int]]:
    """The Converse requests of a ``TURNS``-turn conversation, and how many message contents each one counted."""
    client, stub = client_and_stub()
    sent: list[dict[str, Any]] = []
    client.meta.events.register(
        "before-parameter-build.bedrock-runtime.Converse", lambda params, **_: sent.append(copy.deepcopy(params))
    )
    counted: list[int] = []
    original = scan_module._quick

    def spy(content: list[Any], counting: bool) -> int | None:
        counted[-1] += 1
        return original(content, counting)

    monkeypatch.setattr(scan_module, "_quick", spy)
    model = CachePointChatBedrockConverse(
        model=CLAUDE,
        client=client,
        region_name="us-east-1",
        cache_model_info=get_model_info(CLAUDE, min_tokens_per_cache_point=40),
        **options,
    )
    thread = f"count-reuse-{uuid.uuid4().hex}"  # the kept counts are the process's: a conversation of its own
    history: list[Any] = [SystemMessage(SYSTEM), HumanMessage(words("u0", 30))]
    for turn in range(TURNS):
        stub.add_response("converse", converse_response(words(f"a{turn}", 12)), None)
        counted.append(0)
        with stub:
            model.invoke(history, config={"configurable": {"thread_id": thread}})
        history += [AIMessage(words(f"a{turn}", 12)), HumanMessage(words(f"u{turn + 1}", 15 + 7 * turn))]
    stub.assert_no_pending_responses()
    return sent, counted


def test_each_request_counts_only_its_new_messages_and_sends_what_counting_all_sends(monkeypatch: Any) -> None:
    reused, counted = _conversation(monkeypatch)
    assert counted == [1, 2, 2, 2, 2, 2]  # the first message, then each turn's reply and user message
    assert [sum("cachePoint" in b for m in r["messages"] for b in m["content"]) for r in reused] == [1, 2, 2, 2, 2, 2]
    everything, _ = _conversation(monkeypatch, token_counter=default_count_tokens)
    assert reused == everything

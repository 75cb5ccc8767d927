"""Logged usage and model on assistant messages of the generic readers (OpenAI, Anthropic, LangChain records)."""

from __future__ import annotations

import json
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict

from promptcache.replay._readers import read_file
from promptcache.replay._transcript import Usage


def test_openai_usage_cached_tokens_split_from_the_prompt(tmp_path: Path) -> None:
    doc = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": "hello",
            "model": "gpt-4o-2024-08-06",
            "usage": {
                "prompt_tokens": 2006,
                "completion_tokens": 300,
                "prompt_tokens_details": {"cached_tokens": 1920},
            },
        },
        {"role": "user", "content": "again"},
        {"role": "assistant", "content": "no usage here"},
    ]
    path = tmp_path / "openai.json"
    path.write_text(json.dumps(doc))
    [conv] = read_file(path)
    assert conv.messages[1].usage == Usage(86, 1920, 0, 0, 300)
    assert conv.messages[1].usage.prompt_tokens == 2006
    assert conv.messages[1].model == "gpt-4o-2024-08-06"
    assert (conv.messages[3].usage, conv.messages[3].model) == (None, None)
    assert conv.messages[0].usage is None  # user messages never carry usage


def test_anthropic_event_log_usage_with_ttl_split(tmp_path: Path) -> None:
    usage = {
        "input_tokens": 4,
        "cache_creation_input_tokens": 700,
        "cache_read_input_tokens": 9000,
        "cache_creation": {"ephemeral_5m_input_tokens": 200, "ephemeral_1h_input_tokens": 500},
        "output_tokens": 55,
    }
    lines = [
        {"sessionId": "s", "message": {"role": "user", "content": "hi"}},
        {
            "sessionId": "s",
            "message": {"role": "assistant", "model": "claude-opus-4-6", "content": "hello", "usage": usage},
        },
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    [conv] = read_file(path)
    assert conv.messages[1].usage == Usage(4, 9000, 700, 500, 55)
    assert conv.messages[1].model == "claude-opus-4-6"


def test_langchain_usage_metadata(tmp_path: Path) -> None:
    ai = AIMessage(
        "4",
        usage_metadata={
            "input_tokens": 1200,
            "output_tokens": 3,
            "total_tokens": 1203,
            "input_token_details": {"cache_read": 1000, "cache_creation": 150},
        },
        response_metadata={"model_name": "anthropic.claude-sonnet-4-5-20250929-v1:0"},
    )
    path = tmp_path / "lc.json"
    path.write_text(json.dumps(messages_to_dict([HumanMessage("2+2?"), ai])))
    [conv] = read_file(path)
    assert conv.messages[1].usage == Usage(50, 1000, 150, 0, 3)
    assert conv.messages[1].model == "anthropic.claude-sonnet-4-5-20250929-v1:0"

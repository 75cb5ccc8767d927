"""TrafficRecorder lines written by tests: one recorded call (format version 1) of a LangChain prompt and reply."""

from __future__ import annotations

import json

from langchain_core.messages import AIMessage, BaseMessage, messages_to_dict


def recorded_call(i: int, thread: str, prompt: list[BaseMessage], reply: AIMessage, model: str, every_s: float) -> str:
    """The JSON line of call ``i`` of a recording: id ``c<i>``, started ``100 + every_s * i`` (epoch seconds), one
    second long, in ``thread``, with the prompt and reply as LangChain message dicts."""
    return json.dumps(
        {
            "promptcache": "call",
            "version": 1,
            "id": f"c{i}",
            "started": 100.0 + every_s * i,
            "ended": 101.0 + every_s * i,
            "thread_id": thread,
            "user": None,
            "model": model,
            "model_class": "ChatBedrockConverse",
            "request": {"messages": messages_to_dict(prompt), "tools": [], "settings": {}},
            "response": {"message": messages_to_dict([reply])[0]},
            "text": "kept",
        }
    )

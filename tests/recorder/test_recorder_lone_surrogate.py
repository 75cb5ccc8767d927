"""A message holding a lone surrogate (which UTF-8 cannot encode) is recorded, marked as canonical JSON marks it
(``{"$surrogates": <its json.dumps>}``), instead of losing the line; the replay reads it back, each lone surrogate
as U+FFFD."""

from __future__ import annotations

import io

import orjson
from langchain_core.messages import AIMessage, HumanMessage

from promptcache import TrafficRecorder, with_processors
from promptcache.replay._readers import read_file
from promptcache.testing import ScriptedChatModel

USAGE = {"input_tokens": 15, "output_tokens": 4, "total_tokens": 19}


def test_a_lone_surrogate_is_recorded_and_replayed(tmp_path) -> None:
    stream = io.StringIO()
    model = ScriptedChatModel(replies=[AIMessage("fine", usage_metadata=USAGE)], model_name="claude-sonnet-4-5")
    recorder = TrafficRecorder(stream)
    with_processors(model, [recorder]).invoke([HumanMessage("caf\ud800 ok")], {"configurable": {"thread_id": "t"}})
    assert (recorder.lines_written, recorder.lines_lost) == (1, 0)
    (line,) = [orjson.loads(x) for x in stream.getvalue().splitlines()]
    assert line["request"]["messages"][0]["data"]["content"] == {"$surrogates": '"caf\\ud800 ok"'}
    path = tmp_path / "rec.jsonl"
    path.write_text(stream.getvalue(), encoding="utf-8")
    (conv,) = read_file(path)
    assert [b.text for b in conv.messages[0].blocks] == ["caf\ufffd ok"]

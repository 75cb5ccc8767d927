"""Streaming: conversations read one at a time give the same replay as reading everything up front; requests are
released in send-time order; finished conversations leave nothing behind in the strategies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache.replay._engine import run_replay
from promptcache.replay._stream import TimeOrder, iter_conversations
from promptcache.replay._transcript import TranscriptError

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "data" / "sample_conversations.json"
MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


def _jsonl_copy(tmp_path: Path) -> Path:
    doc = json.loads(SAMPLE.read_text())
    items = doc["conversations"] if isinstance(doc, dict) else doc
    path = tmp_path / "sample.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in items))
    return path


def test_jsonl_of_whole_conversations_streams_to_the_same_result(tmp_path: Path) -> None:
    whole = run_replay([SAMPLE], MODEL)
    streamed = run_replay([_jsonl_copy(tmp_path)], MODEL)
    assert (streamed.conversations, streamed.requests) == (whole.conversations, whole.requests) == (4, 42)
    for name, row in whole.strategies.items():
        other = streamed.strategies[name]
        assert (other.input_tokens, other.read_tokens, other.write_tokens) == (
            row.input_tokens,
            row.read_tokens,
            row.write_tokens,
        ), name
        assert other.cost_usd == pytest.approx(row.cost_usd, abs=1e-12)
    assert streamed.response_cache.hits == whole.response_cache.hits == 1


def test_ids_are_made_unique_across_files_while_streaming(tmp_path: Path) -> None:
    path = _jsonl_copy(tmp_path)
    ids = [c.id for c in iter_conversations([path, path])]
    assert len(ids) == 8 and len(set(ids)) == 8
    assert ids[4] == ids[0] + "#2"


def test_a_bad_line_in_a_streamed_file_names_file_and_line(tmp_path: Path) -> None:
    path = _jsonl_copy(tmp_path)
    path.write_text(path.read_text() + "{not json\n")
    with pytest.raises(TranscriptError, match=r"sample.jsonl:5: invalid JSON on this line"):
        list(iter_conversations([path]))
    path.write_text(path.read_text().replace("{not json", '{"role": "user", "content": "hi"}'))
    with pytest.raises(TranscriptError, match=r"sample.jsonl:5: expected a whole conversation on every line"):
        list(iter_conversations([path]))


class _Req:
    def __init__(self, t: float) -> None:
        self.time_s = t


def test_time_order_releases_requests_once_no_later_conversation_can_precede_them() -> None:
    order = TimeOrder()
    a = [_Req(0.0), _Req(10.0), _Req(20.0)]
    b = [_Req(5.0), _Req(15.0)]
    released = list(order.add(a))  # type: ignore[arg-type]
    assert released == []  # a later conversation may still start before 0 s... or at it
    released = list(order.add(b))  # type: ignore[arg-type]
    assert [r.time_s for r in released] == [0.0]
    assert [r.time_s for r in order.drain()] == [5.0, 10.0, 15.0, 20.0]
    late = TimeOrder()
    list(late.add([_Req(100.0)]))  # type: ignore[list-item]
    list(late.add([_Req(200.0)]))  # type: ignore[list-item]
    list(late.add([_Req(50.0)]))  # type: ignore[list-item]  # starts before 100 s, already released
    assert late.late_conversations == 1


def test_finished_conversations_leave_no_state_in_the_strategies(tmp_path: Path) -> None:
    import promptcache.replay._engine as engine

    kept: dict[str, object] = {}
    original = engine._Run.ordered_totals

    def grab(self: engine._Run) -> dict:  # type: ignore[type-arg]
        kept["run"] = self
        return original(self)

    engine._Run.ordered_totals = grab  # type: ignore[method-assign]
    try:
        run_replay([SAMPLE], MODEL)
    finally:
        engine._Run.ordered_totals = original  # type: ignore[method-assign]
    run = kept["run"]
    for (name, _), (strategy, _) in run.runners.items():  # type: ignore[attr-defined]
        for attr in ("_messages", "_prev_tail", "_previous", "_ttl", "_prev"):
            assert not getattr(strategy, attr, {}), (name, attr)
    assert not run.repeats._lc and not run.repeats._intentions._state  # type: ignore[attr-defined]

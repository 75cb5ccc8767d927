"""One cache timeline: what a request writes is readable once its reply began and lives from when its reply was
done; one account's sessions replay interleaved in send-time order across files and share their fixed prefix; a
model switch on one thread keeps each model's cache and does not split the thread."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from promptcache._pricing import price_for
from promptcache.replay._engine import run_replay
from promptcache.replay._models import cache_rules
from promptcache.replay._simulator import Checkpoint, PromptCacheSimulator
from promptcache.replay._stream import iter_conversations

SONNET4 = "anthropic.claude-sonnet-4-20250514-v1:0"


def _sim() -> PromptCacheSimulator:
    return PromptCacheSimulator(cache_rules(SONNET4), price_for(SONNET4))


CUM, HASHES = [0, 2000, 2100], [b"", b"p1", b"p2"]


def test_a_write_is_readable_once_its_reply_began() -> None:
    sim = _sim()
    first = sim.simulate(CUM, HASHES, 2, [Checkpoint(2)], 100.0, done_s=104.0, start_s=102.0)
    assert first.write_tokens == 2100
    parallel = sim.simulate(CUM, HASHES, 2, [Checkpoint(2)], 101.0)  # sent before the first reply began
    assert (parallel.read_tokens, parallel.write_tokens) == (0, 2100)
    after = sim.simulate(CUM, HASHES, 2, [Checkpoint(2)], 102.5)
    assert (after.read_tokens, after.write_tokens) == (2100, 0)


def test_an_entry_lives_from_when_the_reply_was_done() -> None:
    sim = _sim()
    sim.simulate(CUM, HASHES, 2, [Checkpoint(2)], 0.0, done_s=10.0, start_s=1.0)
    assert sim.simulate(CUM, HASHES, 2, [Checkpoint(2)], 309.0).read_tokens == 2100  # 299 s after the reply
    # the read at 309 s refreshed it from 309 s (no reply time given): gone 300 s later
    assert sim.simulate(CUM, HASHES, 2, [Checkpoint(2)], 609.5).read_tokens == 0


def _stamp(sec: float) -> str:
    return f"2026-03-02T10:{int(sec) // 60:02d}:{sec % 60:06.3f}Z"


def _session(path: Path, sid: str, start: float, calls: list[tuple[str, int, int, int]]) -> Path:
    """A Claude Code log: a user line, then per call ``(model, read, write, input)`` one reply and one user line,
    60 s apart, from ``start`` seconds."""
    lines: list[dict[str, Any]] = []
    parent = None
    t = start

    def add(kind: str, message: dict[str, Any], **extra: Any) -> None:
        nonlocal parent
        uuid = f"{sid}-{len(lines)}"
        lines.append({"parentUuid": parent, "sessionId": sid, "type": kind, "message": message, "uuid": uuid,
                      "timestamp": _stamp(t), **extra})  # fmt: skip
        parent = uuid

    add("user", {"role": "user", "content": f"Task of {sid}"})
    for i, (model, read, write, plain) in enumerate(calls):
        t += 1
        usage = {"input_tokens": plain, "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
                 "output_tokens": 20, "cache_creation": {"ephemeral_5m_input_tokens": write,
                                                         "ephemeral_1h_input_tokens": 0}}  # fmt: skip
        reply = {"model": model, "id": f"msg_{sid}{i}", "role": "assistant", "usage": usage,
                 "content": [{"type": "text", "text": f"step {i} of {sid} " * 30}]}  # fmt: skip
        add("assistant", reply, requestId=f"req_{sid}{i}")
        t += 59
        add("user", {"role": "user", "content": f"next {i} " * 20})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


OPUS, HAIKU = "claude-opus-4-6", "claude-haiku-4-5-20251001"


def test_sessions_of_several_files_replay_in_send_time_order(tmp_path: Path) -> None:
    late = _session(tmp_path / "late.jsonl", "b", 100.0, [(OPUS, 0, 5000, 3), (OPUS, 5000, 400, 3)])
    early = _session(tmp_path / "early.jsonl", "a", 0.0, [(OPUS, 0, 5000, 3), (OPUS, 5000, 400, 3)])
    assert [c.id for c in iter_conversations([late, early])] == ["a", "b"]  # by first send time, not by argument
    result = run_replay([late, early], SONNET4, ["none"])
    assert (result.late_conversations, result.requests) == (0, 4)


def test_one_accounts_sessions_share_the_fixed_prefix(tmp_path: Path) -> None:
    # session b starts 100 s after a, and its first call read the 5,000-token system/tools prefix a wrote
    a = _session(tmp_path / "a.jsonl", "a", 0.0, [(OPUS, 0, 5100, 3), (OPUS, 5100, 400, 3)])
    b = _session(tmp_path / "b.jsonl", "b", 100.0, [(OPUS, 5000, 120, 3), (OPUS, 5120, 400, 3)])
    together = run_replay([a, b], SONNET4, ["none"])
    rows = [c for c in together.fidelity.per_call if "b.jsonl" in c[0]]
    assert rows[0][3:5] == [5000, 5000]  # logged read, simulated read: a's write, shared
    fid = together.fidelity
    assert fid.cost_difference is not None and abs(fid.cost_difference) < 0.01


def test_a_model_switch_keeps_one_thread_and_each_models_cache(tmp_path: Path) -> None:
    calls = [(OPUS, 0, 8000, 3), (OPUS, 8000, 500, 3), (HAIKU, 0, 9200, 3), (OPUS, 8500, 1400, 3),
             (HAIKU, 9200, 1600, 3)]  # fmt: skip
    path = _session(tmp_path / "switch.jsonl", "m", 0.0, calls)
    result = run_replay([path], SONNET4, ["none"])
    assert result.conversations == 1 and result.models == {OPUS: 3, HAIKU: 2}
    fid = result.fidelity
    # logged / simulated read and write per call: Opus reads its own prefix after the Haiku turn, Haiku its own
    # (each whole prompt is cached, the 3 uncached input tokens included: the point is at the end)
    assert [c[3:7] for c in fid.per_call] == [
        [0, 0, 8000, 8003],
        [8000, 8003, 500, 500],
        [0, 0, 9200, 9203],
        [8500, 8503, 1400, 1400],
        [9200, 9203, 1600, 1600],
    ]
    assert fid.cost_difference is not None and abs(fid.cost_difference) < 0.01

"""How the report compares placements with a log's own layout by TTL: like with like where the layout wrote every
entry at one TTL, and at both TTLs, with the split, where it mixed them (docs/replay.md, "Like with like on the
TTL"). Exact figures on two Claude Code sessions written here: one writing 1-hour entries, one 5-minute ones
(Opus 4.6: $5 input, $0.50 read, $6.25 5-minute and $10 1-hour write per 1M)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from promptcache._cli import main
from promptcache.replay._decision import decide
from promptcache.replay._engine import DEFAULT_STRATEGIES, run_replay
from promptcache.replay._layout_ttl import mixed_ttl, mixed_words, uniform_ttl

MODEL = "claude-opus-4-6"


def _usage(read: int, write: int, ttl: str) -> dict[str, Any]:
    long = write if ttl == "1h" else 0
    return {
        "input_tokens": 1,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "cache_creation": {"ephemeral_1h_input_tokens": long, "ephemeral_5m_input_tokens": write - long},
        "output_tokens": 20,
    }


def session(path: Path, sid: str, calls: list[tuple[float, dict[str, Any]]], hour: int = 10) -> Path:
    """A Claude Code log from ``hour`` o'clock: a user text, then per call an assistant ``tool_use`` (with
    ``usage``) and its result."""
    lines: list[dict[str, Any]] = []

    def add(kind: str, message: dict[str, Any], t: float, **extra: Any) -> None:
        stamp = f"2026-03-02T{hour:02d}:{int(t) // 60:02d}:{int(t) % 60:02d}.000Z"
        parent = lines[-1]["uuid"] if lines else None
        lines.append({"parentUuid": parent, "sessionId": sid, "type": kind, "message": message,
                      "uuid": f"{sid}-u{len(lines)}", "timestamp": stamp, **extra})  # fmt: skip

    add("user", {"role": "user", "content": f"Rename the helper in {sid}.py."}, calls[0][0])
    for i, (t, usage) in enumerate(calls):
        tool = {"type": "tool_use", "id": f"toolu_{sid}{i}", "name": "Read", "input": {"file_path": f"f{i}.py"}}
        reply = {"model": MODEL, "id": f"msg_{sid}{i}", "role": "assistant", "content": [tool], "usage": usage}
        add("assistant", reply, t + 0.5, requestId=f"req_{sid}{i}")
        result = {"type": "tool_result", "tool_use_id": f"toolu_{sid}{i}", "content": f"contents of {sid}{i}.py " * 20}
        add("user", {"role": "user", "content": [result]}, calls[i + 1][0] if i + 1 < len(calls) else t + 1)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _calls(ttl: str) -> list[tuple[float, dict[str, Any]]]:
    return [(1.0, _usage(0, 6003, ttl)), (10.0, _usage(6003, 500, ttl)), (20.0, _usage(6503, 300, ttl))]


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "160")


def _report(paths: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["replay", *map(str, paths), "--no-chart", "--out", str(tmp_path / "o")]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_a_layout_that_mixes_ttls_is_compared_at_both_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long, short = session(tmp_path / "a.jsonl", "a", _calls("1h")), session(tmp_path / "b.jsonl", "b", _calls("5m"), 12)
    result = run_replay([long, short], MODEL, DEFAULT_STRATEGIES)
    # half the writes at 1 hour: the old "mostly 1 h" rule would have compared only anchored-tail@1h (20.7% more)
    # the split is the log's bill: a wrote 6,803 tokens at 1 hour, b 6,803 at 5 minutes
    assert (uniform_ttl(result), mixed_ttl(result)) == (None, (6803, 13606, True))
    out = _report([long, short], tmp_path, capsys)
    # as-logged: 6,804 x $10 + 6,804 x $6.25 + 25,016 read x $0.50 per 1M = $0.123073; anchored-tail writes all
    # 13,608 at 5 minutes ($0.097558, 20.7% less) or at 1 hour ($0.148588, 20.7% more)
    assert (
        "anchored-tail at the 5-minute TTL costs 20.7% less than the log's own layout (as-logged) ($0.0255), at the "
        "1-hour TTL 20.7% more, both simulated; the log mixes TTLs (as billed: 6,803 of 13,606 cache-write tokens, "
        "50.0%, at 1 hour, the rest at 5 minutes), so part of the difference is TTL, not placement." in out
    )
    decision = decide(result)
    assert decision is not None
    assert (
        "For agents of your own, anchored-tail would cost 20.7% less than Claude Code's layout on this traffic at the "
        "5-minute TTL; the log mixes TTLs (as billed: 6,803 of 13,606 cache-write tokens, 50.0%, at 1 hour, the rest "
        "at 5 minutes), so part of the difference is TTL, not placement." in decision.advice
    )


def test_a_layout_at_one_ttl_is_compared_like_with_like(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    long = session(tmp_path / "a.jsonl", "a", _calls("1h"))
    result = run_replay([long], MODEL, DEFAULT_STRATEGIES)
    assert (uniform_ttl(result), mixed_ttl(result)) == (3600.0, None)
    out = _report([long], tmp_path, capsys)
    assert "mixes TTLs" not in out
    assert (
        "anchored-tail costs the same as the log's own layout (as-logged), both simulated at the log's 1-hour TTL."
        in out
    )


def test_the_row_the_layout_is_compared_with_is_in_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long = session(tmp_path / "a.jsonl", "a", _calls("1h"))
    out = _report([long], tmp_path, capsys)
    # the footer compares as-logged with anchored-tail@1h, which is not the cheapest @1h row (multi-point@1h): it is
    # shown beside it; anchored-tail@1h: 12,508 read x $0.50 + 6,804 written x $10 per 1M = $0.074294
    assert "│ multi-point@1h │ 1,327 │ 11,990 │ 5,995 │ 5,995 │ 0.0726 │ 75.2% │ 97.7% │ 66.7% │" in out
    assert "│ anchored-tail@1h │ 0 │ 12,508 │ 6,804 │ 6,804 │ 0.0743 │ 76.9% │ 100.0% │ 66.7% │" in out
    mixed = session(tmp_path / "b.jsonl", "b", _calls("5m"), 12)
    out = _report([long, mixed], tmp_path, capsys)
    assert "│ anchored-tail@1h │ 0 │ 25,016 │ 13,608 │ 13,608 │ 0.1486 │ 76.9% │ 120.7% │ 66.7% │" in out


def _both_ttls(five: int, hour: int, read: int) -> dict[str, Any]:
    return {
        "input_tokens": 1,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": five + hour,
        "cache_creation": {"ephemeral_1h_input_tokens": hour, "ephemeral_5m_input_tokens": five},
        "output_tokens": 20,
    }


def test_a_mixed_ttl_split_quotes_the_log_s_bill_where_it_has_usage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = [(1.0, _both_ttls(3000, 3003, 0)), (10.0, _both_ttls(500, 0, 6003)), (20.0, _both_ttls(0, 300, 6503))]
    log = session(tmp_path / "a.jsonl", "a", calls)
    result = run_replay([log], MODEL, DEFAULT_STRATEGIES)
    # billed: 3,003 + 300 of 6,003 + 500 + 300 written at 1 hour; the simulated as-logged row writes 6,295 of 6,804
    assert mixed_ttl(result) == (3303, 6803, True)
    assert (result.strategies["as-logged"].write_1h_tokens, result.strategies["as-logged"].write_tokens) == (
        6295,
        6804,
    )
    words = (
        "the log mixes TTLs (as billed: 3,303 of 6,803 cache-write tokens, 48.6%, at 1 hour, the rest at 5 minutes), "
        "so part of the difference is TTL, not placement"
    )
    decision = decide(result)
    assert decision is not None
    assert any(words in line for line in decision.advice)
    out = _report([log], tmp_path, capsys)
    assert "writes 6,803 (3,303 against 6,295 at the 1-hour TTL)" in out  # the bill line: the log's own split
    assert f"{words}." in out
    assert "6,295 of" not in out


def test_a_mixed_ttl_split_of_a_predicted_row_is_the_simulation_s(tmp_path: Path) -> None:
    calls = [(1.0, _both_ttls(3000, 3003, 0)), (10.0, _both_ttls(500, 0, 6003)), (20.0, _both_ttls(0, 300, 6503))]
    result = run_replay([session(tmp_path / "a.jsonl", "a", calls)], MODEL, DEFAULT_STRATEGIES)
    predicted = dataclasses.replace(result, as_logged_source="predicted")  # the row priced without usage
    split = mixed_ttl(predicted)
    assert split == (6295, 6804, False)
    assert split is not None and mixed_words(split) == (
        "the log's layout mixes TTLs (as simulated: 6,295 of 6,804 cache-write tokens, 92.5%, at 1 hour, the rest at "
        "5 minutes), so part of the difference is TTL, not placement"
    )

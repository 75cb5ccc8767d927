"""The row a TTL sentence is computed from is a row of the table: where the decision's idle-gap line and the
``ttl-expired`` fix price the current layout's 1-hour variant (``as-logged@1h``), the table and the chart show that
row. Exact figures on a Claude Code session written here (Opus 4.6: $5 input, $0.50 read, $6.25 5-minute and $10
1-hour write per 1M), whose third call comes 11 minutes after the second."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptcache.replay._chart import line_specs
from promptcache.replay._decision import decide
from promptcache.replay._engine import DEFAULT_STRATEGIES, run_replay
from promptcache.replay._fixes import ttl_variant
from promptcache.replay._report import render_table
from promptcache.replay._result_rows import shown_rows

MODEL = "claude-opus-4-6"


def _usage(read: int, write: int) -> dict[str, Any]:
    return {
        "input_tokens": 1,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "cache_creation": {"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": write},
        "output_tokens": 20,
    }


def _session(path: Path) -> Path:
    lines: list[dict[str, Any]] = []

    def add(kind: str, message: dict[str, Any], t: float, **extra: Any) -> None:
        stamp = f"2026-03-02T10:{int(t) // 60:02d}:{int(t) % 60:02d}.000Z"
        parent = lines[-1]["uuid"] if lines else None
        lines.append({"parentUuid": parent, "sessionId": "s", "type": kind, "message": message,
                      "uuid": f"u{len(lines)}", "timestamp": stamp, **extra})  # fmt: skip

    calls = [(1.0, _usage(0, 6003)), (10.0, _usage(6003, 500)), (670.0, _usage(0, 6803))]
    add("user", {"role": "user", "content": "Rename the helper."}, calls[0][0])
    for i, (t, usage) in enumerate(calls):
        tool = {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {"file_path": f"f{i}.py"}}
        reply = {"model": MODEL, "id": f"msg_{i}", "role": "assistant", "content": [tool], "usage": usage}
        add("assistant", reply, t + 0.5, requestId=f"req_{i}")
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": f"contents of f{i}.py " * 20}
        add("user", {"role": "user", "content": [result]}, calls[i + 1][0] if i + 1 < len(calls) else t + 1)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")


def test_idle_gap_sentence_row_is_in_table_and_chart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run_replay([_session(tmp_path / "s.jsonl")], MODEL, DEFAULT_STRATEGIES)
    decision = decide(result)
    assert decision is not None and decision.current == "as-logged"
    assert ttl_variant(result, "as-logged") == "as-logged@1h"
    before = ["none", "last-message", "langchain-aws", "multi-point", "anchored-tail", "as-logged", "multi-point@1h"]
    assert list(shown_rows(result)) == before  # no decision given: nothing cites a TTL variant
    assert list(shown_rows(result, decision)) == [*before, "as-logged@1h"]
    render_table(result)
    out = capsys.readouterr().out
    assert "a 1-hour TTL would save $0.0119 over this log." in out
    assert "│ as-logged@1h       │              0 │     12,508 │       6,804 │       6,804 │           0.0743 │" in out
    assert "│ as-logged          │              0 │      6,004 │      13,308 │           0 │           0.0862 │" in out
    labels = [spec["label"] for spec in line_specs(result)]
    assert labels[-1] == "as-logged@1h (76.9% of none)"

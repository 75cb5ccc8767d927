"""Logged usage as evidence: the logged bill, the ``as-logged`` replay of Claude Code's own layout, the fidelity
figure, and every strategy simulated on the logged prompt sizes — exact figures on a session written here."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from promptcache._cli import main
from promptcache.replay._engine import run_replay

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"  # the default; the session's own model (Opus 4.6) prices it


def _usage(input_: int, read: int, write: int, one_hour: bool, output: int = 20) -> dict[str, Any]:
    return {
        "input_tokens": input_,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "cache_creation": {
            "ephemeral_1h_input_tokens": write if one_hour else 0,
            "ephemeral_5m_input_tokens": 0 if one_hour else write,
        },
        "output_tokens": output,
    }


def claude_code_session(path: Path, calls: list[tuple[float, dict[str, Any]]], model: str = "claude-opus-4-6") -> Path:
    """A Claude Code log of one conversation: user text, then per call an assistant tool_use and its tool_result.

    ``calls``: (send time in seconds after the start, usage) per API call; a call is sent when the message before
    it (the user text, or the previous call's tool result) is logged.
    """
    lines: list[dict[str, Any]] = []
    parent = None

    def add(kind: str, message: dict[str, Any], t: float, **extra: Any) -> None:
        nonlocal parent
        uuid = f"u{len(lines)}"
        stamp = f"2026-03-02T10:{int(t) // 60:02d}:{int(t) % 60:02d}.000Z"
        lines.append(
            {
                "parentUuid": parent,
                "sessionId": "s1",
                "type": kind,
                "message": message,
                "uuid": uuid,
                "timestamp": stamp,
                **extra,
            }  # fmt: skip
        )
        parent = uuid

    add("user", {"role": "user", "content": "Rename the helper in util.py."}, calls[0][0])
    for i, (t, usage) in enumerate(calls):
        tool = {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {"file_path": f"f{i}.py"}}
        add(
            "assistant",
            {"model": model, "id": f"msg_{i}", "role": "assistant", "content": [tool], "usage": usage},
            t + 0.5,
            requestId=f"req_{i}",
        )
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": f"contents of f{i}.py " * 20}
        add("user", {"role": "user", "content": [result]}, calls[i + 1][0] if i + 1 < len(calls) else t + 1)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


# Three calls on Opus 4.6 ($5 input, $0.50 read, $10 1-hour write per 1M tokens), the system/tools prefix (5,000
# tokens) already cached when the session starts; prompts 6,003, 6,504 and 6,805 tokens.
CALLS = [
    (1.0, _usage(3, 5000, 1000, True)),
    (10.0, _usage(1, 6003, 500, True)),
    (610.0, _usage(1, 6504, 300, True)),
]


def test_as_logged_replays_claude_codes_layout_on_the_logged_sizes(tmp_path: Path) -> None:
    path = claude_code_session(tmp_path / "s.jsonl", CALLS)
    result = run_replay([path], MODEL, ["none", "langchain-aws", "anchored-tail"], combined=False)
    assert result.models == {"claude-opus-4-6": 3}
    assert result.logged_requests == 3 and result.requests == 3
    assert result.input_tokens == 6003 + 6504 + 6805  # every prompt is the logged size
    logged = result.logged
    assert logged is not None
    assert (logged.input_tokens, logged.read_tokens, logged.write_tokens, logged.write_1h_tokens) == (
        5,
        17507,
        1800,
        1800,
    )
    # 15 + 2,500 + 10,000; 5 + 3,001.5 + 5,000; 5 + 3,252 + 3,000 (micro-USD)
    assert logged.cost_usd == pytest.approx(0.0267785, abs=1e-12)
    row = result.strategies["as-logged"]
    # call 1 reads the warm 5,000-token prefix and writes the 1,003 after it at 1 h (the tail point); call 2
    # reads call 1's tail (6,003) and writes 501; call 3, 600 s later, still reads (1-hour entries) and writes 301
    assert (row.input_tokens, row.read_tokens, row.write_tokens, row.write_1h_tokens) == (0, 17507, 1805, 1805)
    assert row.cost_usd == pytest.approx(0.0268035, abs=1e-12)
    fid = result.fidelity
    assert fid is not None and fid.calls == 3
    assert (fid.read_within, fid.write_within) == (3, 3)  # 1,003 vs 1,000 written: within 5 %
    assert fid.cost_difference == pytest.approx(0.0268035 / 0.0267785 - 1, abs=1e-12)
    assert [c[3:7] for c in fid.per_call] == [[5000, 5000, 1000, 1003], [6003, 6003, 500, 501], [6504, 6504, 300, 301]]
    assert result.strategies["none"].cost_usd == pytest.approx((6003 + 6504 + 6805) * 5e-6, abs=1e-12)
    # langchain-aws writes at 5 minutes: call 3 comes 600 s later and finds only the warm system/tools prefix
    # (cached before the log, kept at 1 h), so it writes the 1,805 tokens after it again
    lc = result.strategies["langchain-aws"]
    assert (lc.read_tokens, lc.write_tokens) == (5000 + 6003 + 5000, 1003 + 501 + 1805)


def test_a_five_minute_log_expires_before_a_ten_minute_gap(tmp_path: Path) -> None:
    calls = [(t, _usage(u["input_tokens"], u["cache_read_input_tokens"], u["cache_creation_input_tokens"], False))
             for t, u in CALLS]  # fmt: skip
    path = claude_code_session(tmp_path / "s.jsonl", calls)
    result = run_replay([path], MODEL, ["none"], combined=False)
    row = result.strategies["as-logged"]
    # 5-minute entries: call 3 (600 s after call 2) reads nothing and writes its whole 6,805-token prompt
    assert (row.read_tokens, row.write_tokens, row.write_1h_tokens) == (5000 + 6003, 1003 + 501 + 6805, 0)
    fid = result.fidelity
    assert fid is not None and (fid.read_within, fid.write_within) == (2, 2)
    assert fid.per_call[2][3:7] == [6504, 0, 300, 6805]


def test_the_report_shows_as_logged_next_to_every_strategy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = claude_code_session(tmp_path / "s.jsonl", CALLS)
    assert main(["replay", str(path), "--out", str(tmp_path / "o"), "--no-chart"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "vs billed" in out and "as logged (billed)" in out
    assert "Token sizes: from the logged usage of all 3 requests." in out
    assert "Fidelity: as-logged simulated $0.0268 vs logged $0.0268 (+0.09%); of 3 calls, 100.0% within 5% on" in out
    report = json.loads((tmp_path / "o" / "replay.json").read_text())
    assert report["models"] == {"claude-opus-4-6": 3}
    assert report["token_sizes"] == {"logged_requests": 3, "estimated_requests": 0, "estimate": "claude"}
    block = report["as_logged"]
    assert block["logged"]["cost_usd"] == pytest.approx(0.0267785, abs=1e-6)  # rounded to 6 places
    assert block["fidelity"]["cache_read_within_5pct"] == 1.0 and len(block["fidelity"]["per_call"]) == 3
    assert block["versus"]["as-logged"]["vs_logged"] == round(0.0268035 / 0.0267785, 6)
    assert set(block["versus"]) == set(report["strategies"])


def test_without_usage_the_report_says_it_is_estimating(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plain.json"
    path.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    assert main(["replay", str(path), "--out", str(tmp_path / "o"), "--no-chart"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Token sizes: estimating (calibrated for Claude over cl100k_base); the log records no usage." in out
    assert "vs as logged" not in out and "as-logged" not in out
    report = json.loads((tmp_path / "o" / "replay.json").read_text())
    assert report["as_logged"] is None and report["token_sizes"]["estimated_requests"] == 1


def test_each_call_is_priced_by_its_own_model(tmp_path: Path) -> None:
    opus = claude_code_session(tmp_path / "opus.jsonl", CALLS)
    haiku = claude_code_session(tmp_path / "haiku.jsonl", CALLS, model="claude-haiku-4-5-20251001")
    result = run_replay([opus, haiku], MODEL, ["none"], combined=False)
    assert result.models == {"claude-opus-4-6": 3, "claude-haiku-4-5-20251001": 3}
    # Haiku 4.5 costs a fifth of Opus 4.6 ($1 vs $5 input): the same usage is billed 1.2x the Opus bill
    assert result.logged is not None and result.logged.cost_usd == pytest.approx(0.0267785 * 1.2, abs=1e-12)
    assert result.strategies["none"].cost_usd == pytest.approx((6003 + 6504 + 6805) * 6e-6, abs=1e-12)
    # --model prices every call as one model: the log's own bill stays priced by the logged models
    forced = run_replay([opus, haiku], "claude-opus-4-6", ["none"], combined=False, force_model=True)
    assert forced.models == {"claude-opus-4-6": 6}
    assert forced.logged is not None and forced.logged.cost_usd == pytest.approx(0.0267785 * 1.2, abs=1e-12)
    assert forced.strategies["none"].cost_usd == pytest.approx((6003 + 6504 + 6805) * 10e-6, abs=1e-12)


def test_bedrock_invocation_logs_replay_the_cache_points_they_carried() -> None:
    from promptcache.replay._as_logged import AsLoggedStrategy
    from promptcache.replay._model_table import ModelTable
    from promptcache.replay._prepare import prepare, requests_of
    from promptcache.replay._readers import read_conversations
    from promptcache.replay._simulator import Checkpoint
    from promptcache.replay._tokens import TokenCounter

    path = Path(__file__).resolve().parents[1] / "data" / "bedrock_logs" / "converse.jsonl"
    with pytest.warns(UserWarning):
        conv = read_conversations([path])[0]
    counter = TokenCounter()
    prepared = prepare(conv, counter)
    strategy = AsLoggedStrategy(ModelTable().rules("anthropic.claude-sonnet-4-5-20250929-v1:0"))
    placed = [strategy.place(r) for r in requests_of(prepared, counter)]
    # one tool schema, one system block: the tools point (1 h) after block 1, the system point after block 2, then
    # a point after the first block of the request's last user message (messages 0, 2, 4: blocks 3, 6, 8)
    assert placed == [
        [Checkpoint(1, 3600.0, "tools"), Checkpoint(2, 300.0, "system"), Checkpoint(3, 300.0, "messages")],
        [Checkpoint(1, 3600.0, "tools"), Checkpoint(2, 300.0, "system"), Checkpoint(6, 300.0, "messages")],
        [Checkpoint(1, 3600.0, "tools"), Checkpoint(2, 300.0, "system"), Checkpoint(8, 300.0, "messages")],
    ]


def test_claude_code_tail_point_sits_where_the_logged_cache_ends() -> None:
    """A call that sent its last 1,500 tokens uncached (logged input_tokens) is replayed with its last breakpoint
    before them, at the block boundary nearest read + write."""
    from promptcache.replay._as_logged import _cached_extent
    from promptcache.replay._prepare import Request
    from promptcache.replay._transcript import Usage

    class _Prepared:
        cum = [0, 18000, 28000, 28160, 29587, 31149]

    usage = Usage(1562, 28160, 1427, 1427)
    request = Request.__new__(Request)
    object.__setattr__(request, "prepared", _Prepared())
    object.__setattr__(request, "n_blocks", 5)
    object.__setattr__(request, "usage", usage)
    assert _cached_extent(request, 1) == 4  # cum 29,587 = 28,160 read + 1,427 written
    object.__setattr__(request, "usage", Usage(2, 28160, 2987, 2987))
    assert _cached_extent(request, 1) == 5  # nothing of note uncached: the end of the request
    object.__setattr__(request, "usage", None)
    assert _cached_extent(request, 1) == 5


@pytest.mark.parametrize("name", ["converse.jsonl", "invoke_anthropic.json"])
def test_bedrock_fixtures_replay_at_their_logged_bill(name: str) -> None:
    """Both invocation-log fixtures (usage from the documented rules, 1-hour points on the tools / system prompt)
    replay as-logged at their logged bill, with the 1-hour tokens where the log put them (the size fit pins the
    1-hour write's end at the last 1-hour point)."""
    path = Path(__file__).resolve().parents[1] / "data" / "bedrock_logs" / name
    with pytest.warns(UserWarning) if name == "converse.jsonl" else contextlib.nullcontext():
        result = run_replay([path], "us.anthropic.claude-sonnet-4-5-20250929-v1:0", ["none"], combined=False)
    assert result.fidelity is not None and result.logged is not None
    assert result.fidelity.cost_difference == pytest.approx(0.0, abs=1e-4)
    assert result.strategies["as-logged"].write_1h_tokens == result.logged.write_1h_tokens > 0
    assert result.strategies["as-logged"].read_tokens == result.logged.read_tokens

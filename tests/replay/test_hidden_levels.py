"""The unlogged prefix of a Claude Code conversation as one block per cached level: every read the log shows
within it is a block boundary, the as-logged layout places a breakpoint there, and a read of that length seeds it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from promptcache.replay._as_logged import AsLoggedStrategy
from promptcache.replay._engine import run_replay
from promptcache.replay._models import CacheRules
from promptcache.replay._prepare import prepare, requests_of
from promptcache.replay._sizes import hidden_levels
from promptcache.replay._tokens import CLAUDE, TokenCounter
from promptcache.replay._transcript import Block, Conversation, Message, Usage

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from shared_data import find_data_file  # noqa: E402

CC = {"format": "claude-code", "hidden_prefix": True}
MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"


def _conv(usages: list[Usage], meta: dict[str, object] | None = None) -> Conversation:
    messages = [Message("user", (Block("text", "start"),))]
    for i, usage in enumerate(usages):
        messages.append(Message("assistant", (Block("text", f"reply {i}"),), usage=usage))
        messages.append(Message("user", (Block("text", f"next {i}"),)))
    return Conversation("c", "c", (), messages, meta={**CC, **(meta or {})})


def _rules(max_points: int) -> CacheRules:
    return CacheRules("claude-opus-4-5", 1024, max_points, (300.0, 3600.0), frozenset({"system", "messages"}))


def _one(message: Message) -> int:
    return 10


def test_every_read_within_the_first_prompt_is_a_level() -> None:
    # first prompt 18,931 (read 18,277); later reads 13,681 and 10,467 (after idle gaps); 22,541 reads history
    conv = _conv([Usage(9, 18_277, 645), Usage(9, 13_681, 7_423), Usage(9, 10_467, 12_074), Usage(9, 22_541, 1000)])
    assert hidden_levels(conv, _one) == [10_467, 13_681, 18_277]


def test_no_read_leaves_one_level_of_the_prompt_minus_its_visible_part() -> None:
    assert hidden_levels(_conv([Usage(1, 0, 5_000), Usage(1, 5_001, 20)]), _one) == [4_991]
    assert hidden_levels(Conversation("c", "c", (), [Message("user", ())], meta=dict(CC)), _one) == []


def test_a_broken_prefix_read_stands_in_for_the_first_read() -> None:
    conv = _conv([Usage(9, 18_277, 645), Usage(9, 19_000, 100)], {"hidden_size": 12_000})
    assert hidden_levels(conv, _one) == [12_000]


def test_the_levels_are_blocks_with_a_breakpoint_each() -> None:
    conv = _conv([Usage(9, 18_277, 645), Usage(9, 13_681, 7_423), Usage(9, 10_467, 12_074)])
    counter = TokenCounter(CLAUDE)
    prepared = prepare(conv, counter)
    assert (prepared.tools_end, prepared.hidden_end) == (0, 3)
    assert prepared.cum[1:4] == [10_467, 13_681, 18_277]
    requests = requests_of(prepared, counter)
    assert [r.input_tokens for r in requests] == [18_931, 21_113, 22_550]
    rules = _rules(4)
    points = AsLoggedStrategy(rules).place(requests[0])
    assert [p.boundary for p in points] == [1, 2, 3, requests[0].n_blocks]


def test_at_most_max_points_minus_one_levels_keep_a_breakpoint() -> None:
    conv = _conv([Usage(9, 18_277, 645), Usage(9, 13_681, 7_423), Usage(9, 10_467, 12_074)])
    counter = TokenCounter(CLAUDE)
    requests = requests_of(prepare(conv, counter), counter)
    points = AsLoggedStrategy(_rules(2)).place(requests[0])
    assert [p.boundary for p in points] == [3, requests[0].n_blocks]


def test_session_share_0ccf1a04_main_thread_reads_each_level() -> None:
    folder = find_data_file("claude_code_ext/session-share", required=False)
    if folder is None:
        pytest.skip("shared data claude_code_ext/session-share not present")
    log = folder / "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl"
    result = run_replay([log], MODEL, ["none"], combined=False)
    fid = result.fidelity
    assert fid is not None and fid.cost_difference is not None
    opus = [(row[3], row[4]) for row in fid.per_call if row[2] == "claude-opus-4-5-20251101"]
    # (logged read, simulated read) of the Opus calls: the three levels read where the log read them
    assert [opus[0], opus[2], opus[3]] == [(18_277, 18_277), (13_681, 13_681), (10_467, 10_467)]
    assert round(fid.cost_difference, 4) == 0.0109
    folder_result = run_replay([folder / log.stem], MODEL, ["none"], combined=False)
    assert folder_result.fidelity is not None and folder_result.fidelity.cost_difference is not None
    assert round(folder_result.fidelity.cost_difference, 4) == 0.0079

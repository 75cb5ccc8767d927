"""A fix whose price is a loss is no fix: where the priced change (a keep-alive, the 1-hour TTL) costs more than the
miss cause it targets, the cause recovers 0 in the table and the JSON, and its fix text names the loss."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from shared_data import find_data_file  # noqa: E402

from promptcache._cli import DEFAULT_MODEL  # noqa: E402
from promptcache.replay._decision import cause_rows  # noqa: E402
from promptcache.replay._engine import DEFAULT_STRATEGIES, ReplayResult, run_replay  # noqa: E402
from promptcache.replay._fixes import one_model_saving, ttl_option  # noqa: E402
from promptcache.replay._report_json import to_json  # noqa: E402

SONNET4 = "anthropic.claude-sonnet-4-20250514-v1:0"


def _ttl_row(result: ReplayResult, name: str) -> dict:
    return next(row for row in cause_rows(result, name) if row["cause"] == "ttl-expired")


def _assert_no_fix(result: ReplayResult, name: str, fix: str) -> None:
    option = ttl_option(result, name)
    assert option is not None and option[0] == fix and option[1] < 0  # the cheaper of the two still loses
    row = _ttl_row(result, name)
    assert row["recoverable_usd"] == 0.0
    assert (
        row["fix"] == f"none you control recovers it cheaper: a {fix} would cost ${-option[1]:,.4f} more over this log"
    )
    json_row = next(r for r in to_json(result)["miss_causes"][name] if r["cause"] == "ttl-expired")
    assert (json_row["recoverable_usd"], json_row["fix"]) == (0.0, row["fix"])


def test_a_keep_alive_that_costs_more_recovers_nothing(tmp_path: Path) -> None:
    # six short conversations, one with an idle gap of 400 s: keeping every prefix warm after each conversation's
    # last request costs more than the one re-write the gap causes
    conversations = []
    for c in range(6):
        messages: list[dict] = [{"role": "system", "content": f"policy {c} " * 1500}]
        for i, t in enumerate([0, 400] if c == 0 else [0, 10]):
            messages += [{"role": "user", "content": f"question {i} " * 30, "timestamp": 10_000 * c + t},
                         {"role": "assistant", "content": "answer " * 20, "timestamp": 10_000 * c + t + 1}]  # fmt: skip
        conversations.append({"id": f"c{c}", "messages": messages})
    path = tmp_path / "log.json"
    path.write_text(json.dumps(conversations))
    result = run_replay([path], SONNET4, ["anchored-tail", "none"])
    assert _ttl_row(result, "anchored-tail")["longest_gap_s"] == 400.0
    _assert_no_fix(result, "anchored-tail", "keep-alive before the TTL ends")


def test_tau_bench_keep_alive_is_no_fix() -> None:
    path = find_data_file("tau_bench_gpt-4o-airline.json", required=False)
    if path is None:
        pytest.skip("shared data tau_bench_gpt-4o-airline.json not present")
    result = run_replay([path], DEFAULT_MODEL, DEFAULT_STRATEGIES)  # the command's defaults: 10 s apart
    _assert_no_fix(result, "anchored-tail", "keep-alive before the TTL ends")


def test_session_share_one_hour_ttl_is_no_fix() -> None:
    folder = find_data_file("claude_code_ext/session-share", required=False)
    if folder is None:
        pytest.skip("shared data claude_code_ext/session-share not present")
    result = run_replay([folder], DEFAULT_MODEL, DEFAULT_STRATEGIES)
    _assert_no_fix(result, "as-logged", "1-hour TTL")  # Claude Code's own layout: idle gaps of up to 93 minutes


def test_staying_on_one_model_that_costs_more_recovers_nothing(tmp_path: Path) -> None:
    # one Sonnet 4 reply, then six on the cheaper Haiku 3.5: replaying them all on Sonnet 4 costs more than the
    # prefix the switch re-wrote
    haiku = "anthropic.claude-3-5-haiku-20241022-v1:0"
    messages: list[dict] = [{"role": "system", "content": "policy " * 1500}]
    for i, model in enumerate([SONNET4] + [haiku] * 6):
        messages += [{"role": "user", "content": f"question {i} " * 30, "timestamp": 20 * i},
                     {"role": "assistant", "content": "answer " * 20, "model": model, "timestamp": 20 * i + 1}]  # fmt: skip
    path = tmp_path / "switch.json"
    path.write_text(json.dumps(messages))
    result = run_replay([path], SONNET4, ["anchored-tail"])
    saved = one_model_saving(result, "anchored-tail")
    assert saved is not None and saved < 0
    row = next(r for r in cause_rows(result, "anchored-tail") if r["cause"] == "model-switch")
    assert row["recoverable_usd"] == 0.0
    assert row["fix"] == (
        "none you control recovers it cheaper: staying on one model within a conversation (prices included) would "
        f"cost ${-saved:,.4f} more over this log"
    )

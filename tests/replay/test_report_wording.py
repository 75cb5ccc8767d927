"""The report's wording where a reader compares or decides: the monthly basis names the log's requests, span and
factor; a tie prints as "costs the same as"; a cheaper anchored-tail+response-cache row says why it is not the
recommendation; the intention-cache line opens with a plain verdict."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from promptcache.replay._decision import decide
from promptcache.replay._engine import DEFAULT_STRATEGIES, ReplayResult, run_replay
from promptcache.replay._report import render_table

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "data" / "sample_conversations.json"
SONNET4 = "anthropic.claude-sonnet-4-20250514-v1:0"


def _text(result: ReplayResult) -> str:
    console = Console(width=400, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    render_table(result, console)
    return console.export_text()


def _timed(path: Path, times: list[float]) -> Path:
    messages: list[dict] = [{"role": "system", "content": "policy " * 1500}]
    for i, t in enumerate(times):
        messages += [{"role": "user", "content": f"question {i}", "timestamp": t},
                     {"role": "assistant", "content": "ok", "model": SONNET4, "timestamp": t + 1}]  # fmt: skip
    path.write_text(json.dumps(messages))
    return path


def test_the_monthly_basis_names_requests_span_and_factor(tmp_path: Path) -> None:
    result = run_replay([_timed(tmp_path / "log.json", [0, 1392, 2784, 4176])], SONNET4, DEFAULT_STRATEGIES)
    decision = decide(result)
    assert decision is not None and decision.rate_source == "log-span" and result.span_s == 4176.0
    # 30 days / 4,176 s = 620.69...
    assert decision.basis == "at this log's rate (4 requests over 70 minutes; a month at that rate = x620.7)"


def test_a_tie_with_the_logs_layout_costs_the_same(tmp_path: Path) -> None:
    # the log's layout is anchored-tail's: one cache point at the end of the system prompt, read on the next call
    turns = [
        {"role": "user", "content": "question", "timestamp": 0},
        {"role": "assistant", "content": "ok", "model": SONNET4, "timestamp": 1,
         "usage": {"input_tokens": 5, "output_tokens": 2, "cache_creation_input_tokens": 0,
                   "cache_read_input_tokens": 0}},
    ]  # fmt: skip
    path = tmp_path / "log.json"
    path.write_text(json.dumps(turns))
    result = run_replay([path], SONNET4, DEFAULT_STRATEGIES)
    ours, logged = result.strategies["anchored-tail"], result.strategies["as-logged"]
    mine = ours.logged_cost_usd if logged.logged_only else ours.cost_usd
    assert mine > 0
    logged.cost_usd = mine * (1 + 4e-4)  # 0.04% dearer: the line prints the difference as 0.0%
    text = " ".join(_text(result).split())
    assert "anchored-tail costs the same as the log's own layout (as-logged), both simulated." in text
    assert "0.0% less" not in text and "0.0% more" not in text


def test_a_cheaper_response_cache_row_says_why_it_is_not_chosen() -> None:
    result = run_replay([SAMPLE], SONNET4, DEFAULT_STRATEGIES, force_model=True)
    decision = decide(result)
    assert decision is not None and decision.strategy == "anchored-tail"
    saved = decision.recommended_usd - result.strategies["anchored-tail+response-cache"].cost_usd
    assert f"{saved:,.4f}" == "0.0004"
    assert decision.advice == [
        "anchored-tail+response-cache (18.3% of no caching) is cheaper but is not the recommendation: it adds the "
        "ResponseCache, a separate plugin that answers an exact repeat without calling the model, so its saving "
        "depends on replies repeating (1 of 42 requests here); adding it would save a further $0.0004 over this log "
        "(input side)."
    ]
    assert decision.to_json()["advice"] == decision.advice
    assert decision.advice[0] in " ".join(_text(result).split())


def test_no_response_cache_note_without_the_row(tmp_path: Path) -> None:
    result = run_replay([_timed(tmp_path / "log.json", [0, 1392, 2784, 4176])], SONNET4, DEFAULT_STRATEGIES)
    assert result.response_cache.hits == 0
    decision = decide(result)
    assert decision is not None and decision.advice == []


def test_the_intention_paragraph_is_plain_and_ends_with_whether_to_use_it() -> None:
    result = run_replay([SAMPLE], SONNET4, DEFAULT_STRATEGIES, force_model=True)
    text = " ".join(_text(result).split())
    assert (
        "Intention cache (IntentionMemory in memory, threshold 0.5, margin 0.15, TTL 3600 s): of 17 tool calls, 3 "
        "calls repeat an earlier successful call of the same user (same tool and arguments, at any distance; 1 of them with "
        "a changed result); serve_repeats would have answered 0 without running the tool (it needs the same "
        "intention too, within the TTL); retrieve_memory found stored results for 3 calls (3 by the exact "
        "intention, 0 by a similar one), but each was the result of another call (another tool or other arguments, "
        "filed under the same or a similar intention), never the one the call needed, so it would have saved no "
        "call; calls that share an intention (by default the latest user message) are told apart only by an "
        "intention argument of their own that names what each call fetches. Use it? Not on this traffic: it would "
        "have answered no call with its own result."
    ) in text

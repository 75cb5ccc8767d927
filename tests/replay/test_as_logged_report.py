"""What the replay report compares with logged usage: the bill on the logged requests only (mixed input), no
comparison under a ``--model`` other than the logged one, one "vs billed" rule, hindsight not counted as a
placement, ``--models`` models of the user's own, and the wording of single-request reports. Exact figures on a
Claude Code session written here (Opus 4.6: $5 input, $0.50 read, $6.25 5-minute and $10 1-hour write per 1M)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from promptcache._cli import main
from promptcache.replay._engine import run_replay
from promptcache.replay._model_table import ModelTable
from promptcache.replay._report import to_json

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"  # the default model: prices the unlogged transcript ($3 input)


def _usage(input_: int, read: int, write: int) -> dict[str, Any]:
    return {
        "input_tokens": input_,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "cache_creation": {"ephemeral_1h_input_tokens": write, "ephemeral_5m_input_tokens": 0},
        "output_tokens": 20,
    }


# Three calls, 1-hour writes, the 5,000-token system/tools prefix cached before the log; prompts 6,003, 6,504,
# 6,805 tokens; the third call 600 s after the second. Billed: 15 + 2,500 + 10,000; 5 + 3,001.5 + 5,000;
# 5 + 3,252 + 3,000 micro-USD = $0.0267785.
CALLS = [(1.0, _usage(3, 5000, 1000)), (10.0, _usage(1, 6003, 500)), (610.0, _usage(1, 6504, 300))]
BILLED = 0.0267785
AS_LOGGED = 0.0268035  # simulated: writes 1,003 / 501 / 301 at 1 h (test_as_logged.py derives it)
NONE_LOGGED = (6003 + 6504 + 6805) * 5e-6  # 0.09656
# anchored-tail writes at 5 minutes: 5,000 read + 1,003 written; 6,003 read + 501 written; call 3 (600 s later)
# finds only the warm 1-hour prefix: 5,000 read + 1,805 written
OURS_LOGGED = (5000 * 0.5 + 1003 * 6.25 + 6003 * 0.5 + 501 * 6.25 + 5000 * 0.5 + 1805 * 6.25) / 1e6


def session(path: Path, calls: list[tuple[float, dict[str, Any]]], model: str = "claude-opus-4-6") -> Path:
    """A Claude Code log: a user text, then per call an assistant ``tool_use`` (with ``usage``) and its result."""
    lines: list[dict[str, Any]] = []

    def add(kind: str, message: dict[str, Any], t: float, **extra: Any) -> None:
        stamp = f"2026-03-02T10:{int(t) // 60:02d}:{int(t) % 60:02d}.000Z"
        parent = lines[-1]["uuid"] if lines else None
        lines.append({"parentUuid": parent, "sessionId": "s1", "type": kind, "message": message,
                      "uuid": f"u{len(lines)}", "timestamp": stamp, **extra})  # fmt: skip

    add("user", {"role": "user", "content": "Rename the helper in util.py."}, calls[0][0])
    for i, (t, usage) in enumerate(calls):
        tool = {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {"file_path": f"f{i}.py"}}
        reply = {"model": model, "id": f"msg_{i}", "role": "assistant", "content": [tool], "usage": usage}
        add("assistant", reply, t + 0.5, requestId=f"req_{i}")
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": f"contents of f{i}.py " * 20}
        add("user", {"role": "user", "content": [result]}, calls[i + 1][0] if i + 1 < len(calls) else t + 1)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def plain(path: Path) -> Path:
    """A transcript without usage: one request of 1 token (below every minimum: uncached, $3 per 1M)."""
    path.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    return path


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests read the bordered table with exact token counts: a terminal of 120 columns or more."""
    monkeypatch.setenv("COLUMNS", "160")


def _report(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["replay", *argv, "--no-chart"]) == 0
    return " ".join(capsys.readouterr().out.split())


def test_mixed_input_compares_the_bill_on_the_logged_requests_only(tmp_path: Path) -> None:
    cc, other = session(tmp_path / "s.jsonl", CALLS), plain(tmp_path / "plain.json")
    result = run_replay([cc, other], MODEL, ["none", "anchored-tail"], combined=False)
    assert result.requests == 4 and result.logged_requests == 3
    none, ours, as_logged = (result.strategies[n] for n in ("none", "anchored-tail", "as-logged"))
    assert none.cost_usd == pytest.approx(NONE_LOGGED + 3e-6, abs=1e-12)  # the plain request is counted ...
    assert none.logged_cost_usd == pytest.approx(NONE_LOGGED, abs=1e-12)  # ... but not against the bill
    assert ours.logged_cost_usd == pytest.approx(OURS_LOGGED, abs=1e-12)
    # the as-logged row covers the 3 logged calls (not the plain request as uncached input), and its "vs none"
    # divides by none on those calls
    assert (as_logged.requests, as_logged.input_tokens, as_logged.logged_only) == (3, 0, True)
    assert as_logged.cost_usd == pytest.approx(AS_LOGGED, abs=1e-12)
    assert result.relative("as-logged") == pytest.approx(AS_LOGGED / NONE_LOGGED, abs=1e-12)
    fid = result.fidelity
    assert fid is not None and fid.calls == 3 and fid.simulated_usd == pytest.approx(AS_LOGGED, abs=1e-12)
    block = to_json(result)["as_logged"]
    assert (block["logged_requests"], block["requests"], block["compared"]) == (3, 4, True)
    assert block["versus"]["none"]["vs_logged"] == round(NONE_LOGGED / BILLED, 6)
    assert block["versus"]["anchored-tail"]["vs_logged"] == round(OURS_LOGGED / BILLED, 6)
    assert block["versus"]["as-logged"]["vs_logged"] == round(AS_LOGGED / BILLED, 6)
    assert block["versus"]["anchored-tail"]["vs_as_logged"] == round(OURS_LOGGED / AS_LOGGED, 6)


def test_the_mixed_report_says_what_the_bill_covers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cc, other = session(tmp_path / "s.jsonl", CALLS), plain(tmp_path / "plain.json")
    out = _report([str(cc), str(other), "--strategy", "anchored-tail", "--out", str(tmp_path / "o")], capsys)
    assert "as logged: 3 of 4 requests carry logged usage; the billed row, 'vs billed', the fidelity and the " in out
    # none | uncached | read | write | of which 1h | USD | vs none | vs billed | w/ read: none on the logged calls is 360.6 % of
    # the bill (not 360.6 % + the plain request); as-logged 100.1 % of the bill (not a forced 100 %); the billed
    # row 27.7 % of none on the same calls
    assert "│ none │ 19,313 │ 0 │ 0 │ 0 │ 0.0966 │ 100.0% │ 360.6% │ 0.0% │" in out
    assert "│ anchored-tail │ 1 │ 16,003 │ 3,309 │ 0 │ 0.0287 │ 29.7% │ 107.1% │ 75.0% │" in out
    assert "│ as-logged │ 0 │ 17,507 │ 1,805 │ 1,805 │ 0.0268 │ 27.8% │ 100.1% │ 100.0% │" in out
    assert "│ as logged (billed) │ 5 │ 17,507 │ 1,800 │ 1,800 │ 0.0268 │ 27.7% │ 100.0% │ — │" in out
    # the text line: both simulated, on the logged calls, at the TTL the log wrote with (its writes are 1-hour
    # ones: anchored-tail at 5 minutes would be 7.0% dearer, a TTL difference, not placement)
    assert (
        "anchored-tail costs the same as the log's own layout (as-logged), both simulated at the log's 1-hour TTL on "
        "the 3 logged requests." in out
    )
    assert "'vs billed' is the row's cost on the requests with logged usage relative to the log's billed cost" in out


def test_a_forced_model_other_than_the_logged_one_is_not_compared_with_the_bill(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cc = session(tmp_path / "s.jsonl", CALLS)
    out = _report([str(cc), "--model", MODEL, "--out", str(tmp_path / "o")], capsys)
    assert (
        f"as logged: not compared, --model forces {MODEL} while the log was billed for claude-opus-4-6 (the "
        "as-logged row is simulated for the forced model)." in out
    )
    assert "Fidelity:" not in out and "vs billed" not in out and "as logged (billed)" not in out
    assert "│ as-logged │" in out  # still simulated
    block = json.loads((tmp_path / "o" / "replay.json").read_text())["as_logged"]
    assert block["compared"] is False and block["fidelity"] is None
    assert block["not_compared"] == f"--model forces {MODEL} while the log was billed for claude-opus-4-6"
    assert {v["vs_logged"] for v in block["versus"].values()} == {None}
    # forcing the logged model itself (its Bedrock id) keeps the comparison
    same = run_replay([cc], "us.anthropic.claude-opus-4-6-v1", ["none"], combined=False, force_model=True)
    assert same.billed_mismatch() is None and to_json(same)["as_logged"]["fidelity"]["calls"] == 3


def test_hindsight_is_a_reference_not_the_cheapest_placement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cc = session(tmp_path / "s.jsonl", CALLS)
    result = run_replay([cc], MODEL, ["last-message", "hindsight"], combined=False)
    # hindsight (1-hour writes where the next request comes late) is cheaper, yet not a placement to pick
    assert result.strategies["hindsight"].cost_usd < result.strategies["last-message"].cost_usd
    # a Claude Code log keeps its own layout (its placement is not the user's); hindsight is never the pick
    assert (result.best(), result.cheapest_placement()) == ("as-logged", "last-message")
    argv = [str(cc), "--strategy", "last-message", "--strategy", "hindsight", "--out", str(tmp_path / "o")]
    out = _report(argv, capsys)
    assert out.startswith("Keep what you have: Claude Code places its own cache points")
    assert json.loads((tmp_path / "o" / "replay.json").read_text())["best_strategy"] == "as-logged"


def test_a_model_defined_in_the_models_file_is_used_without_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    model = "acme.claude-report-fix-v1"  # in no shipped table, named only here (the warning is once per id)
    entry = {"family": "claude", "min_tokens": 1, "max_points": 3, "ttls": ["5m", "1h"],
             "cachable": ["system", "messages", "tools"], "input": 2.0, "output": 8.0, "cache_write_5m": 2.5,
             "cache_write_1h": 4.0, "cache_read": 0.2}  # fmt: skip
    models = tmp_path / "models.json"
    models.write_text(json.dumps({model: entry}))
    with caplog.at_level(logging.WARNING, logger="promptcache.cache_points"):
        out = _report([str(plain(tmp_path / "p.json")), "--model", model, "--models", str(models),
                       "--out", str(tmp_path / "o")], capsys)  # fmt: skip
    assert "not in the Bedrock prompt-caching table" not in caplog.text and "promptcache replay" in out
    report = json.loads((tmp_path / "o" / "replay.json").read_text())
    assert report["cache_rules"] == {"min_tokens_per_cache_point": 1, "max_cache_points": 3, "ttls_s": [300.0, 3600.0],
                                     "cachable": ["messages", "system", "tools"], "lookback_blocks": 20}  # fmt: skip
    assert report["prices_usd_per_mtok"] == {"input": 2.0, "output": 8.0, "cache_write_5m": 2.5,
                                             "cache_write_1h": 4.0, "cache_read": 0.2,
                                             "source": f"user file {models}"}  # fmt: skip
    # the same id without an entry is the unknown model: warned, conservative default (no tool points)
    with caplog.at_level(logging.WARNING, logger="promptcache.cache_points"):
        rules = ModelTable().rules(model)
    assert "not in the Bedrock prompt-caching table" in caplog.text
    assert (rules.min_tokens, "tools" in rules.cachable) == (4096, False)


def test_models_file_defaults_and_partial_prices(tmp_path: Path) -> None:
    table = ModelTable({"acme.nova-report-fix-v1": {"input": 1.0, "output": 2.0, "cache_write_5m": 1.0,
                                                    "cache_read": 0.1}, "claude-opus-4-6": {"cache_read": 0.4}},
                       source="m.toml")  # fmt: skip
    rules = table.rules("acme.nova-report-fix-v1")
    assert (rules.family, rules.min_tokens, rules.max_points, rules.ttls_s) == ("nova", 1024, 4, (300.0,))
    assert rules.cachable == frozenset({"system", "messages"}) and rules.supports_cache
    assert table.price_source("acme.nova-report-fix-v1") == "user file m.toml"
    assert (
        table.price_source("claude-opus-4-6")
        == "user file m.toml (cache_read); the rest https://platform.claude.com/docs/en/about-claude/pricing (read 2026-12-01)"
    )
    assert table.price_source(MODEL) == "https://aws.amazon.com/bedrock/pricing/ (read 2026-12-01)"
    with pytest.raises(
        ValueError, match=r"acme.x: cachable must be a list of \['system', 'messages', 'tools'\], got \['tool'\]"
    ):
        ModelTable({"acme.x": {"cachable": ["tool"]}})


def test_a_single_request_report_reads_well(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = session(tmp_path / "one.jsonl", CALLS[:1])
    argv = [str(one), "--strategy", "langchain-aws", "--strategy", "anchored-tail", "--out", str(tmp_path / "o")]
    out = _report(argv, capsys)
    assert "Token sizes: from the logged usage of the one request." in out and "all 1 request" not in out
    assert "as logged: the one request carries logged usage." in out
    assert out.startswith("Keep what you have: Claude Code places its own cache points")
    assert "anchored-tail costs the same as langchain-aws." in out

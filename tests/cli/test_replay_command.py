"""The ``promptcache replay`` command on the shipped sample, and its errors (exit code 2, one line)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from promptcache._cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "data" / "sample_conversations.json"
MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"
ALL = ["none", "last-message", "langchain-aws", "multi-point", "anchored-tail", "anchored-tail+response-cache"]


def test_replay_on_the_shipped_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["replay", str(SAMPLE), "--model", MODEL, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    report = json.loads((tmp_path / "replay.json").read_text())
    assert list(report["strategies"]) == ALL
    assert all(row["unavailable"] is None for row in report["strategies"].values())
    assert (report["conversations"], report["requests"]) == (4, 42)
    rel = {name: row["relative_to_none"] for name, row in report["strategies"].items()}
    assert rel["none"] == 1.0
    assert rel["anchored-tail"] <= rel["langchain-aws"] < rel["last-message"] < 1.0
    assert rel["anchored-tail+response-cache"] < rel["langchain-aws"]
    # sample-2 opens with the same first message as sample-1, 90 s later: one ResponseCache hit
    assert report["response_cache"]["hits"] == 1
    # IntentionMemory, calls filed under the latest human message, one memory per call: 3 retrieve_memory answers,
    # none listing the call's own result (a later call for the same message finds only the earlier calls': sample-2
    # get_order, sample-3 get_order and get_tracking, 4 results listed); no serve_repeats answer (no call repeats
    # under the same message). 3 calls repeat an earlier call (get_customer, get_order HB-7Q2K9X, get_tracking);
    # 12 of 17 results stored (not the failed redeem_gift_card, nor change_/start_/join_ tools: side effects).
    intention = report["intention_cache"]
    assert {k: v for k, v in intention.items() if k != "memory"} == {
        "tool_calls": 17,
        "looked_up": 17,
        "answered": 3,
        "answered_exact": 3,
        "answered_similar": 0,
        "wrong_answers": 3,
        "wrong_exact": 3,
        "wrong_similar": 0,
        "right_answers": 0,
        "right_answers_stale": 0,
        "listed_results": 4,
        "served_repeats": 0,
        "served_repeats_stale": 0,
        "stored": 12,
        "same_call_repeats": 3,
        "same_call_repeats_changed": 1,
        "users": 2,
    }  # get_tracking: "out for delivery", then "delivered"
    assert intention["memory"]["threshold"] == 0.5 and intention["memory"]["ttl_s"] == 3600.0
    none = report["strategies"]["none"]
    assert none["input_tokens"] == report["input_tokens"] and none["cache_read_tokens"] == 0
    assert (tmp_path / "replay.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for name in ALL:
        assert name in out
    assert "vs none" in out
    assert (
        "retrieve_memory found stored results for 3 calls (3 by the exact intention, 0 by a similar one), but each "
        "was the result of another call" in " ".join(out.split())
    )
    assert "uncached input" in out
    assert " ".join(out.split()).startswith(
        "Switch to anchored-tail (the default of CachePointChatBedrockConverse and BedrockCachePoints): it costs "
        "18.5% of no caching (langchain-aws costs the same), saving $"
    )
    assert report["decision"]["action"] == "switch" and report["best_strategy"] == "anchored-tail"
    assert "Requests 10 s apart where no timestamps are recorded (42 requests)." in " ".join(out.split())


def test_replay_says_when_no_placement_pays(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 600 s between requests: every 5-minute write expires unread, so every placement costs more than none
    assert main(["replay", str(SAMPLE), "--model", MODEL, "--gap-s", "600", "--out", str(tmp_path), "--no-chart"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    report = json.loads((tmp_path / "replay.json").read_text())
    cheapest = min(
        (row["relative_to_none"], name)
        for name, row in report["strategies"].items()
        if name not in {"none", "anchored-tail+response-cache"}
    )
    assert cheapest[0] > 1.0
    assert (
        f"no placement beats no caching at this spacing (the cheapest, {cheapest[1]}, costs {cheapest[0]:.1%} of no "
        "caching)"
    ) in out
    assert out.startswith("Leave caching off") and report["decision"]["action"] == "disable"
    assert report["best_strategy"] == "none"


def test_strategy_selection_always_keeps_the_baseline(tmp_path: Path) -> None:
    assert main(["replay", str(SAMPLE), "--strategy", "last-message", "--no-chart", "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "replay.json").read_text())
    assert list(report["strategies"]) == ["none", "last-message"]
    assert not (tmp_path / "replay.png").exists()


def test_malformed_file_is_one_line_naming_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('[\n  {"role": "user", "content": "hi"},\n  {"role": "assistant", "content": 42}\n]\n')
    assert main(["replay", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == f"promptcache: error: {bad}:3: content must be a string or a list of blocks, got 42\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--model", "openai.gpt-5"], "no Amazon Bedrock price for model 'openai.gpt-5' (read as 'openai.gpt-5')"),
        (["--strategy", "magic"], "unknown strategy 'magic'"),
        (["--gap-s", "-1"], "--gap-s must be a finite number of seconds >= 0, got -1.0"),
        (["--response-cache-ttl", "0"], "--response-cache-ttl must be a finite number of seconds > 0, got 0.0"),
        (["--response-cache-ttl", "inf"], "--response-cache-ttl must be a finite number of seconds > 0, got inf"),
        (["--response-cache-ttl", "nan"], "--response-cache-ttl must be a finite number of seconds > 0, got nan"),
        (["--response-cache-ttl-s", "nan"], "--response-cache-ttl-s must be a finite number of seconds > 0, got nan"),
        (["--response-cache-ttl-s=0"], "--response-cache-ttl-s must be a finite number of seconds > 0, got 0.0"),
    ],
)
def test_bad_options_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str) -> None:
    assert main(["replay", str(SAMPLE), "--out", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def test_short_prompts_are_told_they_are_below_the_minimum(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # one small conversation, timestamped: nothing reaches Sonnet 4's 1,024-token minimum, so no placement pays; the
    # advice says why (not "writes expire"), with singular nouns and the recorded spacing
    path = tmp_path / "small.json"
    path.write_text(
        json.dumps(
            [
                {"role": "user", "content": "Where is order 17?", "timestamp": 100},
                {"role": "assistant", "content": "It has shipped.", "timestamp": 101},
            ]
        )
    )
    assert main(["replay", str(path), "--model", MODEL, "--out", str(tmp_path / "o"), "--no-chart"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "1 conversation, 1 request, " in out
    assert (
        # 6 cl100k_base tokens, x1.22 for Claude text (promptcache.replay._tokens.CLAUDE): 7
        "Leave caching off: nothing can be cached here: the largest request has 7 tokens, below the 1,024 tokens "
        f"{MODEL} needs before a cache point"
    ) in out
    assert "Requests spaced by their recorded timestamps." in out and "the log records no tool calls" in out


def test_slow_traffic_advice_names_the_1h_ttl_only_where_the_model_lacks_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 600 s gaps: 5-minute entries expire unread. Sonnet 4 has no 1-hour TTL: the advice points to a model that has
    # it. Sonnet 4.5 has it: the decision is anchored-tail with the 1-hour TTL.
    args = ["replay", str(SAMPLE), "--gap-s", "600", "--out", str(tmp_path), "--no-chart"]
    assert main([*args, "--model", MODEL]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "no placement beats no caching at this spacing" in out
    assert "Leave caching off for such traffic or use a model that offers the 1-hour TTL" in out
    assert main([*args, "--model", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert out.startswith('Use the 1-hour TTL with anchored-tail (cache_ttl="1h")')


def test_response_cache_ttl_sets_which_repeats_hit(tmp_path: Path) -> None:
    # sample-2 repeats sample-1's first request 90 s later: a hit with the default 300 s, none with 60 s
    for ttl, hits in (("60", 0), ("300", 1), ("86400", 1)):
        assert main(["replay", str(SAMPLE), "--response-cache-ttl", ttl, "--out", str(tmp_path), "--no-chart"]) == 0
        report = json.loads((tmp_path / "replay.json").read_text())
        assert (report["response_cache"]["hits"], report["response_cache"]["ttl_s"]) == (hits, float(ttl))
        combined = report["strategies"]["anchored-tail+response-cache"]
        assert combined["model_calls"] == report["requests"] - hits


def test_python_dash_m_runs_the_command(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "promptcache", "replay", str(SAMPLE), "--no-chart", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "replay.json").read_text())["requests"] == 42


def test_run_replay_reports_progress() -> None:
    from promptcache.replay import run_replay

    seen: list[tuple[int, int | None]] = []
    result = run_replay(
        [SAMPLE], MODEL, ["none"], combined=False, progress=lambda done, total: seen.append((done, total))
    )
    # the replay streams conversation by conversation: the total is not known while it runs (None)
    assert seen[0] == (1, None) and seen[-1] == (42, None) and len(seen) == 42
    assert list(result.strategies) == ["none"]


def _fails(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    return captured.err


def test_first_user_mistakes_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = ["--out", str(tmp_path / "out")]
    assert _fails(capsys, ["replay", str(tmp_path / "nope.json"), *out]) == (
        f"promptcache: error: {tmp_path / 'nope.json'}: no such file\n"
    )
    assert "is a directory holding no Claude Code sessions" in _fails(capsys, ["replay", str(tmp_path), *out])
    (tmp_path / "empty.json").write_text("")
    assert _fails(capsys, ["replay", str(tmp_path / "empty.json"), *out]).endswith(
        "empty.json:1: empty file: no conversations\n"
    )
    (tmp_path / "notes.txt").write_text("just some notes")
    assert "notes.txt:1: not a JSON or JSONL transcript" in _fails(
        capsys, ["replay", str(tmp_path / "notes.txt"), *out]
    )
    (tmp_path / "one.json").write_text('[{"role": "user", "content": "hi"}]')
    assert "nothing to replay in" in _fails(capsys, ["replay", str(tmp_path / "one.json"), *out])
    assert not (tmp_path / "out").exists()


def test_unknown_strategy_is_reported_before_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the file does not exist: the strategy error comes first, without reading anything
    err = _fails(capsys, ["replay", str(tmp_path / "nope.json"), "--strategy", "bogus"])
    assert err.startswith("promptcache: error: unknown strategy 'bogus'; known: none, last-message")


def test_out_must_be_a_writable_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    for target in ("file", "file/sub"):
        err = _fails(capsys, ["replay", str(SAMPLE), "--out", str(tmp_path / target)])
        assert err == f"promptcache: error: --out must be a directory, but {str(tmp_path / 'file')!r} is a file\n"


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [({"response_cache_ttl_s": -1.0}, "ResponseCache TTL"), ({"gap_s": float("nan")}, "gap_s must be")],
)
def test_run_replay_checks_its_numbers_before_reading(tmp_path: Path, kwargs: dict[str, float], needle: str) -> None:
    from promptcache.replay._engine import run_replay

    with pytest.raises(ValueError, match=needle):  # the file does not exist: had it been read, TranscriptError
        run_replay([tmp_path / "missing.json"], MODEL, **kwargs)

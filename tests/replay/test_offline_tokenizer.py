"""Everything that could download at run time works with the network cut (tiktoken's BPE files above all)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_NO_NETWORK = """
import socket
def _refuse(*args, **kwargs):
    raise OSError("network disabled by test_offline")
socket.socket.connect = _refuse
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
"""


def _run_offline(code: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {
        "PATH": "/usr/bin:/bin",
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-tiktoken-cache"),
        "HOME": str(tmp_path),
        "HF_HUB_OFFLINE": "1",
    }
    return subprocess.run(
        [sys.executable, "-c", _NO_NETWORK + textwrap.dedent(code)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_token_counting_needs_no_network(tmp_path: Path) -> None:
    proc = _run_offline(
        """
        from promptcache.cache_points import default_count_tokens
        from promptcache.replay._tokens import get_encoding
        print(default_count_tokens({"role": "user", "content": "hello world"}), get_encoding().name)
        """,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    count, name = proc.stdout.split()
    assert int(count) >= 2 and name == "cl100k_base"


def test_replay_cli_runs_offline(tmp_path: Path) -> None:
    sample = ROOT / "examples" / "data" / "sample_conversations.json"
    proc = _run_offline(
        f"""
        import sys
        from promptcache._cli import main
        sys.exit(main(["replay", {str(sample)!r}, "--out", "out", "--no-chart"]))
        """,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert {"none", "langchain-aws", "multi-point"} <= set(report["strategies"])


def test_token_estimate_follows_the_models_tokenizer_generation() -> None:
    from promptcache.replay._tokens import CLAUDE, CLAUDE_2026, RAW, TokenCounter, calibration_for
    from promptcache.replay._transcript import Block

    # Opus 4.7 and later (Opus 4.8, Sonnet 5, Opus 5) count about 30% more tokens for the same text
    for model in ("claude-opus-4-7", "claude-opus-4-8", "us.anthropic.claude-opus-4-7", "claude-sonnet-5",
                  "claude-opus-5"):  # fmt: skip
        assert calibration_for(model) is CLAUDE_2026, model
    for model in ("claude-opus-4-6", "claude-sonnet-4-5-20250929", "anthropic.claude-haiku-4-5-20251001-v1:0"):
        assert calibration_for(model) is CLAUDE, model
    assert calibration_for("gpt-4o", "openai") is RAW and calibration_for("amazon.nova-pro-v1:0", "nova") is RAW
    old = TokenCounter(CLAUDE)
    new = old.calibrated(CLAUDE_2026)
    text = Block("text", "The replay counts every distinct text once. " * 40)
    assert new.block(text) == round(old.text(text.text) * 1.586)  # 1.22 x 1.30
    assert new.block(text) / old.block(text) == pytest.approx(1.30, abs=0.01)

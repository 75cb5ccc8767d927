"""What a new user trips over, said before the run: a Claude Code session replayed in part, an ``--out`` that
cannot be written, ``as-logged`` asked for on a log without usage, and ``--help`` naming every input format."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from shared_data import find_data_file  # noqa: E402

from promptcache._cli import main  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "sample_conversations.json"
SESSION = "258c7280-ae70-4798-800f-63464d01a85d"


def _session(tmp_path: Path) -> Path:
    source = find_data_file(f"claude_code/{SESSION}.jsonl", required=False)
    if source is None:
        pytest.skip("shared Claude Code sessions not present")
    shutil.copy(source, tmp_path / f"{SESSION}.jsonl")
    shutil.copytree(source.with_suffix(""), tmp_path / SESSION)
    return tmp_path


def test_a_session_log_without_its_folder_says_what_is_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _session(tmp_path)
    log = root / f"{SESSION}.jsonl"
    assert main(["replay", str(log), "--out", str(tmp_path / "o"), "--no-chart"]) == 0
    err = capsys.readouterr().err
    assert (
        f"promptcache: warning: {log}: its session folder {root / SESSION}/ holds 2 sub-agent log(s) (Task "
        f"sub-agents, compaction) that are not replayed; pass {root / SESSION} instead to include them\n"
    ) in err
    assert main(["replay", str(root / SESSION), "--out", str(tmp_path / "o"), "--no-chart"]) == 0
    assert "warning" not in capsys.readouterr().err  # the folder with its log beside it: nothing is missing


def test_a_session_log_given_twice_says_what_is_left_out_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _session(tmp_path)
    log = root / f"{SESSION}.jsonl"
    assert main(["replay", str(log), str(log), "--out", str(tmp_path / "o"), "--no-chart"]) == 0
    assert capsys.readouterr().err.count("sub-agent log(s) (Task sub-agents, compaction) that are not replayed") == 1


def test_a_session_folder_without_its_log_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _session(tmp_path)
    (root / f"{SESSION}.jsonl").unlink()
    assert main(["replay", str(root / SESSION), "--out", str(tmp_path / "o"), "--no-chart"]) == 0
    assert capsys.readouterr().err == (
        f"promptcache: warning: {root / SESSION}: the session log {SESSION}.jsonl is not beside the folder (nor "
        "inside it): only its sub-agent logs are replayed, without the main conversation\n"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_out_fails_before_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert main(["replay", str(SAMPLE), "--out", str(locked / "o")]) == 2
    finally:
        locked.chmod(0o700)
    out, err = capsys.readouterr()
    assert (
        err == f"promptcache: error: --out {str(locked / 'o')!r} cannot be written: {str(locked)!r} is not writable\n"
    )
    assert out == ""  # nothing replayed


def test_as_logged_on_a_log_without_usage_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(SAMPLE), "--strategy", "as-logged", "--out", str(tmp_path), "--no-chart"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    reason = json.loads((tmp_path / "replay.json").read_text())["strategies"]["as-logged"]["unavailable"]
    assert reason.startswith("the log records no usage, so its own cache layout and bill are unknown")
    assert f"as-logged: {reason}" in out


def test_help_names_every_input_format(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["replay", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for needle in ("OpenAI chat", "Anthropic Messages", "LangChain", "JSON or JSONL", "Claude Code session logs",
                   "<session>/ folder", "Bedrock model invocation logs", "gzip", "--monthly-requests"):  # fmt: skip
        assert needle in text, needle

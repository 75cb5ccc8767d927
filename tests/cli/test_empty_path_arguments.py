"""An empty path argument ("") would mean the current directory (``Path("")`` is ``.``): every path option of the
command refuses it, one line naming the option, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptcache._cli import main


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "ok.json"
    path.write_text('[{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}]')
    return path


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    code = main(argv)
    return code, capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["replay", ""], "FILE"),
        (["replay", "{t}", ""], "FILE"),
        (["replay", "{t}", "--out", ""], "--out"),
        (["replay", "{t}", "--models", ""], "--models"),
        (["calibrate-intentions", ""], "PAIRS.jsonl"),
        (["calibrate-intentions", "{t}", "--model-dir", ""], "--model-dir"),
    ],
    ids=["only-file", "second-file", "out", "models", "pairs", "model-dir"],
)
def test_an_empty_path_is_refused(
    argv: list[str],
    named: str,
    transcript: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        _run([a.replace("{t}", str(transcript)) for a in argv], capsys)
    err = capsys.readouterr().err.strip().splitlines()
    assert stop.value.code == 2 and len(err) == 1
    assert err[0].startswith(f"promptcache: error: argument {named}: an empty path '' is not allowed")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.json"]

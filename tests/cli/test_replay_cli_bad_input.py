"""promptcache replay with bad options and files: exit code 2 and one line naming the value."""

from __future__ import annotations

import pytest


def _cli(argv, capsys):
    from promptcache._cli import main

    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.err.strip().splitlines()


@pytest.fixture
def transcript(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text('[{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}]')
    return path


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such file"),
        (b"", "empty file"),
        (b"\xff\xfe\x00garbage", "invalid JSON"),
        (b"null", "expected conversations"),
        (b'[{"messages":[{"role":"user","content":NaN}]}]', "invalid JSON"),
        (b"[" * 5000 + b"]" * 5000, "invalid JSON"),
    ],
    ids=["missing", "empty", "binary", "null", "nan-literal", "deep"],
)
def test_cli_bad_files_are_one_line_exit_2(content, message, tmp_path, capsys):
    path = tmp_path / "in.json"
    if content is not None:
        path.write_bytes(content)
    code, err = _cli(["replay", str(path), "--no-chart", "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and len(err) == 1
    assert err[0].startswith(f"promptcache: error: {path}:") and message in err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "option, named",
    [
        (["--gap-s", "nan"], "nan"),
        (["--gap-s", "-1"], "-1"),
        (["--gap-s", "inf"], "inf"),
        (["--model", ""], "''"),
        (["--strategy", "bogus"], "bogus"),
    ],
)
def test_cli_bad_options_are_one_line_exit_2(option, named, transcript, tmp_path, capsys):
    code, err = _cli(["replay", str(transcript), "--no-chart", "--out", str(tmp_path / "out"), *option], capsys)
    assert code == 2 and len(err) == 1 and named in err[0]
    assert not (tmp_path / "out").exists()


def test_cli_out_pointing_at_a_file_is_one_line_exit_2(transcript, tmp_path, capsys):
    target = tmp_path / "afile"
    target.write_text("not a directory")
    code, err = _cli(["replay", str(transcript), "--no-chart", "--out", str(target)], capsys)
    assert code == 2 and len(err) == 1 and str(target) in err[0]

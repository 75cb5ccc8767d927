"""``promptcache calibrate-intentions`` with bad input: exit 2 and one stderr line naming the bad value, before any
pair is embedded (the embeddings here fail the test if they are ever asked)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from promptcache.intention._calibrate_cli import run

ROW = {"stored": "show invoices", "asked": "please show invoices", "same": True}


class NeverEmbed:
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise AssertionError("embedded before the input was checked")


def _pairs(tmp_path: Path, *rows: object) -> Path:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(capsys: pytest.CaptureFixture[str], pairs: object, max_error: float = 0.01, model_dir: object = None) -> str:
    args = argparse.Namespace(pairs=str(pairs), max_error=max_error, model_dir=model_dir)
    code = run(args, embeddings=NeverEmbed() if model_dir is None else None)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("promptcache: error: "), err
    return err


@pytest.mark.parametrize("value", [float("nan"), -1.0, 5.0])
def test_a_max_error_outside_0_1_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: float) -> None:
    err = _run(capsys, _pairs(tmp_path, ROW), max_error=value)
    assert f"--max-error must be a number in [0, 1], got {value}" in err


def test_a_missing_model_dir_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(capsys, _pairs(tmp_path, ROW), model_dir=str(tmp_path / "nonexistent"))
    assert "nonexistent" in err


def test_a_named_pipe_is_refused_without_waiting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "pairs.fifo"
    os.mkfifo(fifo)
    err = _run(capsys, fifo)
    assert f"{fifo}: not a regular file" in err


def test_a_device_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    err = _run(capsys, "/dev/zero")
    assert "/dev/zero: not a regular file" in err


def test_a_file_that_is_not_utf8_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"stored": "caf\xe9", "asked": "x", "same": true}\n')
    err = _run(capsys, path)
    assert f"{path}: not UTF-8 text" in err


def test_a_lone_surrogate_in_a_pair_is_refused_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(ROW) + "\n" + '{"stored": "\\ud800 lights", "asked": "lights", "same": true}\n')
    err = _run(capsys, path)
    assert err == "promptcache: error: line 2: stored holds a lone surrogate (not UTF-8 text): '\\ud800 lights'\n"


@pytest.mark.parametrize("text", ["", "   ", "?!"])
def test_an_intention_without_a_letter_or_digit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    err = _run(capsys, _pairs(tmp_path, ROW, {"stored": "show invoices", "asked": text, "same": False}))
    assert err == f"promptcache: error: line 2: asked must hold a letter or digit, got {text!r}\n"

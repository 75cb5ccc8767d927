"""A JSONL file's lines are taken one at a time, never as a list of every line (which takes many times the file's
size in memory): format detection reads the first non-blank line only, whatever follows it, and reading a file
splits it once, lazily, with the line numbers ``bytes.splitlines`` gives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from promptcache.replay import _jsonpos
from promptcache.replay._bedrock_logs import is_invocation_log
from promptcache.replay._formats import detect_jsonl
from promptcache.replay._jsonpos import iter_lines
from promptcache.replay._readers import _read_jsonl, read_file

DATA = Path(__file__).resolve().parents[1] / "data"
OPENAI = DATA / "call_logs" / "openai_proxy.jsonl"
BEDROCK = DATA / "bedrock_logs" / "converse.jsonl"
TAIL = b"{}\n" * 200_000  # records of no format: detection must not reach them


class _Unsplittable(bytes):
    """File contents that refuse to be split whole."""

    def splitlines(self, keepends: bool = False) -> list[bytes]:
        raise AssertionError("the whole buffer was split into a list of lines")


def _counting(monkeypatch: pytest.MonkeyPatch, module: object) -> list[int]:
    """Count the lines ``module`` takes from ``iter_lines``."""
    taken = [0]

    def counted(data: bytes) -> Iterator[bytes]:
        for line in iter_lines(data):
            taken[0] += 1
            yield line

    monkeypatch.setattr(module, "iter_lines", counted)
    return taken


def _first_line(path: Path) -> bytes:
    return path.read_bytes().split(b"\n", 1)[0] + b"\n"


@pytest.mark.parametrize(
    "data",
    [b"", b"\n", b"a", b"a\n", b"a\n\n", b"a\r\nb\rc\nd", b"\r\r\n\n", b"a\x0bb\x0c\x1c\x85c\nd", b"  \n x \r\n"],
)
def test_lines_are_those_splitlines_gives(data: bytes) -> None:
    assert list(iter_lines(data)) == data.splitlines()


def test_detection_reads_only_the_first_non_blank_line(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = _counting(monkeypatch, _jsonpos)  # detection reads lines through _jsonpos.first_record
    fmt = detect_jsonl(_Unsplittable(b"\n   \n" + _first_line(OPENAI) + TAIL))
    assert (fmt is not None and fmt.name, taken[0]) == ("OpenAI request/response logs", 3)


def test_detection_of_an_invocation_log_reads_only_its_first_record(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = _counting(monkeypatch, _jsonpos)
    assert is_invocation_log(data=_Unsplittable(b"\n" + _first_line(BEDROCK) + TAIL)) is True
    assert taken[0] == 2


@pytest.mark.filterwarnings("ignore:.*skipped")
@pytest.mark.parametrize("path", [OPENAI, BEDROCK, DATA / "call_logs" / "stream_json.jsonl"])
def test_a_jsonl_file_is_read_without_splitting_it_whole(path: Path) -> None:
    whole = read_file(path)
    lazily = _read_jsonl(str(path), _Unsplittable(path.read_bytes()))
    assert [(c.id, len(c.messages)) for c in lazily] == [(c.id, len(c.messages)) for c in whole]
    assert len(whole) >= 1

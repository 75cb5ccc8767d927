"""``promptcache calibrate-intentions`` reads a pair file as JSONL: a line ends at ``\\n``, ``\\r`` or ``\\r\\n``
only, so a string holding a raw U+2028 or U+0085 (JSON allows them unescaped) stays one pair; and a ``source``
holding a line break is shown escaped in its table's title, on one line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from promptcache.intention._calibrate import Pair, load_pairs
from promptcache.intention._calibrate_cli import run


class Fixed:
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] for _ in texts]


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85"])
def test_a_raw_unicode_line_break_inside_a_string_is_part_of_the_pair(tmp_path: Path, char: str) -> None:
    path = tmp_path / "pairs.jsonl"
    row = f'{{"stored": "pay 5 dollars{char}now", "asked": "pay 5 dollars now", "same": true}}'
    path.write_text(row + "\n" + row, encoding="utf-8")
    assert load_pairs(path) == [Pair(f"pay 5 dollars{char}now", "pay 5 dollars now", True, "")] * 2


def test_lines_end_at_newline_carriage_return_or_both(tmp_path: Path) -> None:
    rows = [json.dumps({"stored": f"show invoice {i}", "asked": f"show invoice {i}", "same": True}) for i in range(4)]
    path = tmp_path / "pairs.jsonl"
    path.write_bytes(f"{rows[0]}\r\n{rows[1]}\r{rows[2]}\n\n{rows[3]}".encode())
    assert [p.stored for p in load_pairs(path)] == [f"show invoice {i}" for i in range(4)]


def test_a_bad_line_after_a_unicode_line_break_keeps_its_file_line_number(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    good = '{"stored": "pay 5 dollars\u2028now", "asked": "pay 5 dollars now", "same": true}'
    path.write_text(f"{good}\n{good}\nnot json\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^line 3: not a labelled pair"):
        load_pairs(path)


def test_the_command_accepts_the_pair_and_escapes_a_source_holding_a_line_break(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pairs.jsonl"
    rows = [
        {"stored": "pay 5 dollars\u2028now", "asked": "pay 5 dollars now", "same": True, "source": "team\nA"},
        {"stored": "show invoices", "asked": "please show invoices", "same": True, "source": "tab\there\u2028"},
        {"stored": "list files", "asked": "list the files", "same": True, "source": "back\\slash"},
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    code = run(argparse.Namespace(pairs=str(path), max_error=0.01, model_dir=None), embeddings=Fixed())
    out = capsys.readouterr().out.split("\n")
    assert code == 0
    titles = [line for line in out if line.endswith(" (1)")]
    assert titles == ["back\\\\slash (1)", "tab\\there\\u2028 (1)", "team\\nA (1)"]
    assert "all pairs (3)" in out

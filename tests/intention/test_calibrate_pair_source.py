"""``promptcache calibrate-intentions`` with a pair whose ``source`` is not a string: refused while the pairs
are loaded (exit 2, the line named), not after every pair is embedded."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from promptcache.intention._calibrate_cli import run

ROW = {"stored": "show invoices", "asked": "please show invoices", "same": True}


class NeverEmbed:
    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise AssertionError("embedded before the input was checked")


@pytest.mark.parametrize("source", [42, None, ["a"]])
def test_a_source_that_is_not_a_string_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: object
) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in (ROW, {**ROW, "source": source})), encoding="utf-8")
    code = run(argparse.Namespace(pairs=str(path), max_error=0.01, model_dir=None), embeddings=NeverEmbed())
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "line 2" in err and "source" in err

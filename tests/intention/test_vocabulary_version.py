"""The vocabulary version (the part of every meaning signature that says which word lists made it) changes when a
list changes, and not when only a file's description or layout does: such an edit re-indexes no memory."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from promptcache.intention import _vocabulary


@pytest.fixture
def edited(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Replace what a data file holds (``edit(name, change)``) and return the vocabulary version it gives."""
    original = _vocabulary._load

    def edit(name: str, change: Any) -> str:
        def load(which: str) -> tuple[dict[str, Any], bytes]:
            data, raw = original(which)
            if which == name:
                data = copy.deepcopy(data)
                change(data)
                raw = json.dumps(data, indent=4).encode()
            return data, raw

        monkeypatch.setattr(_vocabulary, "_load", load)
        _vocabulary.default_vocabulary.cache_clear()
        return _vocabulary.default_vocabulary().version

    yield edit
    monkeypatch.setattr(_vocabulary, "_load", original)
    _vocabulary.default_vocabulary.cache_clear()


def test_a_description_or_layout_edit_keeps_the_version(edited: Any) -> None:
    current = _vocabulary.default_vocabulary().version
    assert edited("synonyms.json", lambda d: d.update(_about="reworded")) == current
    assert edited("fillers.json", lambda d: None) == current  # the same lists, written with another indent


def test_a_list_edit_changes_the_version(edited: Any) -> None:
    current = _vocabulary.default_vocabulary().version
    assert edited("synonyms.json", lambda d: d["classes"].append(["mon", "monday"])) != current
    assert edited("fillers.json", lambda d: d["words"].remove("please")) != current

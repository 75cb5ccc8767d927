"""A bad ``scope`` is refused when the recorder is built, before any file exists (it would otherwise lose every
line at call time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from promptcache import TrafficRecorder


@pytest.mark.parametrize(
    ("scope", "error", "shown"),
    [
        (b"x", TypeError, "scope must be a string or None, got bytes: b'x'"),
        ([], TypeError, "scope must be a string or None, got list: []"),
        (True, TypeError, "scope must be a string or None, got bool: True"),
        (float("nan"), TypeError, "scope must be a string or None, got float: nan"),
        ("", ValueError, "scope must be a non-empty string, got ''"),
    ],
)
def test_a_bad_scope_is_refused_before_the_file_is_created(
    tmp_path: Path, scope: object, error: type, shown: str
) -> None:
    target = tmp_path / "calls.jsonl"
    with pytest.raises(error) as caught:
        TrafficRecorder(target, scope=scope)  # type: ignore[arg-type]  # the bad value under test
    assert str(caught.value) == shown
    assert not target.exists()

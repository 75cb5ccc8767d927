"""A request's Converse messages (``Request.groups``) are a view of its conversation's groups, not a copy: it reads
as the list of the conversation's first groups followed by the request's own last group (cut at its end)."""

from __future__ import annotations

import pytest

from promptcache.replay._prepare import Group, RequestGroups


def _groups() -> list[Group]:
    return [Group("user", 0, 2), Group("assistant", 2, 3), Group("user", 3, 5), Group("assistant", 5, 7)]


def test_the_view_reads_as_the_list_it_stands_for() -> None:
    groups = _groups()
    tail = Group("user", 3, 4, last_kind="text")  # the third group, cut after its first block
    view = RequestGroups(groups, 2, tail)
    expected = [groups[0], groups[1], tail]
    assert len(view) == 3
    assert list(view) == expected and view == expected
    assert list(reversed(view)) == expected[::-1]
    assert [view[i] for i in range(-3, 3)] == expected + expected
    assert view[-2:] == expected[-2:] and view[:1] == [groups[0]] and view[::-1] == expected[::-1]
    assert view[-1] is tail and view[2] is tail
    assert [g.end for g in view] == [2, 3, 4]


@pytest.mark.parametrize("index", [3, -4])
def test_an_index_past_either_end_raises(index: int) -> None:
    with pytest.raises(IndexError):
        RequestGroups(_groups(), 2, Group("user", 3, 4))[index]


def test_a_request_of_one_group_is_its_tail() -> None:
    tail = Group("user", 0, 1)
    view = RequestGroups(_groups(), 0, tail)
    assert list(view) == [tail] and len(view) == 1 and view[-1] is tail

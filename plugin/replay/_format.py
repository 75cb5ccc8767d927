"""What a log format's reader provides (``Format``): the fields its records carry, how one is recognised and
parsed. The formats themselves, and detection: ``promptcache.replay._formats``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ._bedrock_bodies import ParsedCall
from ._transcript import Conversation

__all__ = ["Format"]


@dataclass(frozen=True)
class Format:
    """One log format.

    Attributes:
        name: shown in reports and errors (``"LangSmith runs"``).
        key: ``Conversation.meta["format"]``.
        signature: fields its records carry, in the order a missing one is named.
        matches: ``matches(record)`` -> whether the record is of this format.
        parse: ``parse(record, line)`` -> the calls it holds, each with its intention-cache family (a user id,
            or ``None``); raises ``BadRecord``.
        finish: ``finish(name, calls)`` -> conversations, when the format groups calls itself (optional).
        read_file: ``read_file(name, jsonl_bytes)`` -> conversations, for a format read whole rather than record
            by record (``parse`` is then unused).
        usage_problem: ``usage_problem(record)`` -> why its logged usage is not token counts (``None``: it is);
            such a record's calls keep no usage (``promptcache.replay._usage_checks``). Optional.
    """

    name: str
    key: str
    signature: tuple[str, ...]
    matches: Callable[[Any], bool]
    parse: Callable[[Any, int], list[tuple[ParsedCall, str | None]]]
    finish: Callable[[str, list[ParsedCall]], list[Conversation]] | None = None
    read_file: Callable[[str, bytes], list[Conversation]] | None = None
    usage_problem: Callable[[Any], str | None] | None = None

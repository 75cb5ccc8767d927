"""A Claude Code ``compact_boundary`` logs the size of the context it compacted (``compactMetadata.preTokens``):
without usage, the conversation that ends there is sized to it (the unlogged prefix kept, its messages scaled in
proportion to their estimates); with usage, the logged sizes stand and the figure is not used."""

from __future__ import annotations

import json
from pathlib import Path

from promptcache.replay._prepare import prepare
from promptcache.replay._readers import read_conversations
from promptcache.replay._tokens import CLAUDE, TokenCounter


def _record(kind: str, uuid: str, parent: str | None, second: int, **fields: object) -> dict[str, object]:
    stamp = f"2026-01-01T00:{second // 60:02d}:{second % 60:02d}.000Z"
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "timestamp": stamp, **fields}


def _reply(
    uuid: str, parent: str, second: int, call: str, text: str, usage: dict[str, int] | None
) -> dict[str, object]:
    message: dict[str, object] = {"id": call, "role": "assistant", "model": "claude-opus-4-6"}
    message["content"] = [{"type": "text", "text": text}]
    if usage is not None:
        message["usage"] = usage
    return _record("assistant", uuid, parent, second, requestId=call, message=message)


def _session(tmp_path: Path, pre_tokens: object, usage: dict[str, int] | None = None) -> Path:
    lines = [
        _record("user", "u1", None, 0, message={"role": "user", "content": "hello there, please read the file"}),
        _reply("a1", "u1", 1, "r1", "Sure, reading it now.", usage),
        _record("user", "u2", "a1", 10, message={"role": "user", "content": "now summarise it in one line"}),
        _reply("a2", "u2", 11, "r2", "It is a short file.", usage),
        {
            "type": "system",
            "subtype": "compact_boundary",
            "uuid": "b1",
            "parentUuid": None,
            "logicalParentUuid": "a2",
            "sessionId": "s1",
            "timestamp": "2026-01-01T00:01:00.000Z",
            "compactMetadata": {"trigger": "auto", "preTokens": pre_tokens},
        },
        _record("user", "u3", "b1", 61, message={"role": "user", "content": "Continued. Summary: a file was read."}),
        _reply("a3", "u3", 62, "r3", "Continuing.", usage),
    ]
    path = tmp_path / "s1.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def _sizes(path: Path) -> list[tuple[str, object, list[int]]]:
    out = []
    for conv in read_conversations([path]):
        cum = prepare(conv, TokenCounter(CLAUDE)).cum
        out.append((conv.id, conv.meta.get("compacted_tokens"), [cum[i + 1] - cum[i] for i in range(len(cum) - 1)]))
    return out


def test_the_conversation_a_compaction_ends_is_sized_to_the_logged_context(tmp_path: Path) -> None:
    (first, tokens, sizes), (after, after_tokens, _) = _sizes(_session(tmp_path, 40_000))
    assert (first, tokens, after, after_tokens) == ("s1", 40_000, "s1@7", None)
    # the unlogged prefix (25,900) kept; the 14,100 other tokens over the messages as their estimates (9, 7, 9, 7)
    assert sizes == [25_900, 3_966, 3_084, 3_966, 3_084]
    assert sum(sizes) == 40_000


def test_without_a_usable_logged_size_the_estimate_stands(tmp_path: Path) -> None:
    for bad in (True, 0, -5, "40000", None):
        (_, tokens, sizes), _ = _sizes(_session(tmp_path, bad))
        assert tokens is None and sizes == [25_900, 9, 7, 9, 7], bad


def test_a_logged_context_smaller_than_the_unlogged_prefix_is_not_used(tmp_path: Path) -> None:
    (_, tokens, sizes), _ = _sizes(_session(tmp_path, 20_000))
    assert tokens == 20_000 and sizes == [25_900, 9, 7, 9, 7]


def test_with_usage_logged_the_logged_sizes_stand(tmp_path: Path) -> None:
    usage = {"input_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 30_000, "output_tokens": 5}
    (_, tokens, sizes), _ = _sizes(_session(tmp_path, 40_000, usage))
    assert tokens == 40_000  # read, but the logged prompts (30,003 at both calls) size every block
    assert sizes == [29_994, 9, 0, 0, 7]

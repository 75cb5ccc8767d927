"""A line that is not valid JSON keeps what survives of a user record's message, so a prompt estimated without
logged usage still holds its size; any other broken record stays a link without content."""

from __future__ import annotations

from promptcache.replay._claude_code_tree import broken_line


def test_a_broken_tool_result_keeps_its_message_text_without_the_tool_output_copy() -> None:
    raw = (
        b'{"parentUuid":"p1","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":'
        b'"toolu_9","type":"tool_result","content":"line one\\nline \\"two\\""}]},"uuid":"u9","toolUseResult":{"st'
    )
    line = broken_line(0, 7, raw)
    assert (line.file, line.line, line.uuid, line.parent, line.kind) == (0, 7, "", "p1", "user")
    [block] = line.blocks
    assert (block.kind, block.id) == ("tool_result", "toolu_9")
    assert block.text == (
        '"message":{"role":"user","content":[{"tool_use_id":"toolu_9","type":"tool_result","content":"line one\n'
        'line "two""}]}'
    )


def test_a_cut_user_text_keeps_what_is_left() -> None:
    raw = b'{"parentUuid":null,"type":"user","message":{"role":"user","content":"please fix th\x01'
    line = broken_line(1, 3, raw)
    assert (line.parent, line.kind) == (None, "user")
    assert [(b.kind, b.text) for b in line.blocks] == [
        ("text", '"message":{"role":"user","content":"please fix th\x01')
    ]


def test_a_broken_assistant_record_is_a_link_without_content() -> None:
    raw = b'{"parentUuid":"p2","message":{"model":"claude-opus-4-5","type":"message","role":"assistant","cont'
    line = broken_line(0, 4, raw)
    assert (line.parent, line.kind, line.blocks) == ("p2", "other", ())

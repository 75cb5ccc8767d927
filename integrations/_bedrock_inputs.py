"""The caller's messages, guarded from langchain-aws' in-place trimming: ``detach_final_reply``.

``ChatBedrockConverse`` trims trailing whitespace from the text of a conversation's final ``AIMessage`` (Converse
refuses a final assistant turn that ends in whitespace) by assigning to the message object it was given -- the
caller's own, in its history or graph state. The next request of the conversation then holds the trimmed text
where a copy of the same history holds the original, so the same content would count, fingerprint and place
differently depending on whether the caller passed the same objects again. The wrapper hands langchain-aws a copy
of that one message instead; the request sent is unchanged (the copy is trimmed).
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage

__all__ = ["detach_final_reply"]


def detach_final_reply(messages: list[BaseMessage]) -> list[BaseMessage]:
    """``messages`` (a list of ``BaseMessage``) with a final ``AIMessage`` replaced by a copy whose content list and
    dict blocks are copies too (so trimming them leaves the caller's untouched); any other input as it is."""
    if not isinstance(messages, Sequence) or not messages or not isinstance(messages[-1], AIMessage):
        return messages
    last = messages[-1]
    content = last.content
    if isinstance(content, list):
        content = [dict(block) if isinstance(block, dict) else block for block in content]
    return [*messages[:-1], last.model_copy(update={"content": content})]

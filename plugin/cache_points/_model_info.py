"""``ModelInfo``: what a Bedrock model allows for prompt caching, and the table of known models.

Every value in the table comes from the Amazon Bedrock user guide, "Prompt caching for faster model inference"
(https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html, table "Supported models, regions, and
limits"), cross-checked with the Bedrock model cards for context windows and output limits (the same figures
langchain-aws ships in its model profiles). Each entry names its source in ``ModelInfo.source``.

The minimums were brought up to date with that page as read in 2026 (Claude Sonnet 4.x and Opus 4.8: 1,024; Opus
4.5-4.7 and Haiku 4.5: 4,096; the newest family, Opus 5: 512; 1-hour TTL on the 4.5+ models), cross-checked with
Anthropic's "Prompt caching" page (the same minimums for the same models on the Anthropic API).

Anthropic API model ids (``claude-opus-4-6``, ``claude-haiku-4-5-20251001``, aliases such as ``claude-sonnet-4-5``)
resolve to the Bedrock entry of the same model (``canonical_model_id``). Model ids resolve with or without a
cross-region inference prefix (``us.``, ``eu.``, ``apac.``, ``global.``, ``au.``,
``ca.``, ``jp.``, ``in.``, ``us-gov.``) and from foundation-model / system inference-profile ARNs. Claude models that
Bedrock serves but that are absent from that table (Claude 3 Haiku / Sonnet / Opus, Claude 3.5 Sonnet v1, Claude 2.x,
Claude Instant) are listed with ``supports_prompt_cache=False``: Bedrock refuses any ``cachePoint`` on them. A model
that is not in the table gets a conservative default (the family's strictest minimum, no 1-hour TTL, no tool points
outside Claude) and one warning per model id. Application inference-profile ARNs name no model: pass ``base_model_id``
(or a ``ModelInfo``) for them.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BEDROCK_MAX_CACHE_POINTS",
    "CACHABLE_FIELDS",
    "MODEL_INFO",
    "TTLS",
    "ModelInfo",
    "canonical_model_id",
    "get_model_info",
    "resolve_model_id",
]

logger = logging.getLogger("promptcache.cache_points")

#: Bedrock rejects a request with more than 4 ``cachePoint`` blocks (user guide, "Supported models ... limits").
BEDROCK_MAX_CACHE_POINTS = 4
#: The request fields a cache point can follow: Converse ``system``, ``messages`` and ``toolConfig.tools``.
CACHABLE_FIELDS = frozenset({"system", "messages", "tools"})
#: The TTL values of a Converse ``CachePointBlock`` (API reference, ``CachePointBlock.ttl``: ``5m`` | ``1h``), in
#: increasing order.
TTLS = ("5m", "1h")

_GUIDE = "AWS Bedrock user guide, prompt-caching.html (Supported models, regions, and limits)"
_GUIDE_1H = _GUIDE + "; 1-hour TTL per the same page's TTL section"
_NOT_IN_GUIDE = (
    "absent from " + _GUIDE + ": Bedrock offers no prompt caching on this model; context and output "
    "limits from Anthropic's models overview (legacy models)"
)
_REGION_PREFIXES = frozenset({"us", "eu", "apac", "global", "au", "ca", "jp", "in", "us-gov"})


@dataclass(frozen=True)
class ModelInfo:
    """Prompt-caching limits of one model.

    Attributes:
        max_tokens: maximum output tokens.
        context_window: maximum input tokens.
        supports_prompt_cache: whether the model accepts ``cachePoint`` blocks at all.
        max_cache_points: cache points allowed in one request (system, tools, manual and message points together;
            Bedrock's ceiling is 4).
        min_tokens_per_cache_point: minimum tokens in each cached segment (a point placed earlier is ignored by
            Bedrock, so the strategy never places one).
        cachable_fields: which of ``"system"``, ``"messages"``, ``"tools"`` may hold a point.
        allowed_ttls: the ``cachePoint.ttl`` values the model accepts (``"5m"`` always; ``"1h"`` on newer Claude).
        source: where the values come from.
        model_id: the resolved base model id (``""`` for a hand-built instance).
        provider: ``"anthropic"``, ``"amazon"`` (Nova) or ``"unknown"``; drives Nova's placement rules.

    Raises:
        ValueError: (also TypeError; on construction or `with_overrides`) an unknown cachable field, a
            negative minimum or point count, a TTL other than ``"5m"``/``"1h"``; the message names the bad value.
    """

    max_tokens: int
    context_window: int
    supports_prompt_cache: bool
    max_cache_points: int
    min_tokens_per_cache_point: int
    cachable_fields: tuple[str, ...]
    allowed_ttls: tuple[str, ...] = ("5m",)
    source: str = _GUIDE
    model_id: str = ""
    provider: str = "unknown"

    def __post_init__(self) -> None:
        for name in ("max_tokens", "context_window", "max_cache_points", "min_tokens_per_cache_point"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"ModelInfo.{name} must be an int, got {type(value).__name__}: {value!r}")
            if value < 0:
                raise ValueError(f"ModelInfo.{name} must be >= 0, got {value!r}")
        if not isinstance(self.supports_prompt_cache, bool):
            raise TypeError(
                f"ModelInfo.supports_prompt_cache must be a bool, got "
                f"{type(self.supports_prompt_cache).__name__}: {self.supports_prompt_cache!r}"
            )
        fields = tuple(self.cachable_fields) if not isinstance(self.cachable_fields, str) else (self.cachable_fields,)
        unknown = [f for f in fields if f not in CACHABLE_FIELDS]
        if unknown:
            raise ValueError(
                f"ModelInfo.cachable_fields has unknown field(s) {unknown!r}; allowed: {sorted(CACHABLE_FIELDS)}"
            )
        ttls = tuple(self.allowed_ttls) if not isinstance(self.allowed_ttls, str) else (self.allowed_ttls,)
        bad = [t for t in ttls if t not in TTLS]
        if bad:
            raise ValueError(f"ModelInfo.allowed_ttls has unknown TTL(s) {bad!r}; allowed: {list(TTLS)}")
        object.__setattr__(self, "cachable_fields", fields)
        object.__setattr__(self, "allowed_ttls", ttls)

    @property
    def is_nova(self) -> bool:
        """True for Amazon Nova (no tool points; no point right after a ``toolResult`` or an image)."""
        return self.provider == "amazon"

    def with_overrides(self, **changes: Any) -> ModelInfo:
        """A copy with some values replaced (validated like the constructor), e.g. a lower minimum for tests.

        Raises:
            TypeError: a name that is not a ``ModelInfo`` field. ValueError: a bad value (see the class docstring).
        """
        names = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise TypeError(f"ModelInfo has no field(s) {unknown!r}")
        return dataclasses.replace(self, **changes)

    def check_ttl(self, ttl: str | None) -> str | None:
        """Validate a requested cache TTL against this model. ``None`` means the default (``"5m"``).

        Raises:
            ValueError: ``ttl`` is not one of `allowed_ttls` (the message names the model and allowed set).
        """
        if ttl is None:
            return None
        if ttl not in self.allowed_ttls:
            raise ValueError(
                f"cache TTL {ttl!r} is not allowed for model {self.model_id or '<custom>'!r}; "
                f"allowed: {list(self.allowed_ttls)} (source: {self.source})"
            )
        return ttl


def _claude(model_id: str, max_tokens: int, context: int, min_tokens: int, one_hour: bool) -> ModelInfo:
    return ModelInfo(
        max_tokens=max_tokens,
        context_window=context,
        supports_prompt_cache=True,
        max_cache_points=4,
        min_tokens_per_cache_point=min_tokens,
        cachable_fields=("system", "messages", "tools"),
        allowed_ttls=("5m", "1h") if one_hour else ("5m",),
        source=_GUIDE_1H if one_hour else _GUIDE,
        model_id=model_id,
        provider="anthropic",
    )


def _claude_uncached(model_id: str, max_tokens: int, context: int) -> ModelInfo:
    # A Claude model Bedrock serves but without prompt caching: not in the guide's table, and Bedrock refuses any
    # cachePoint on it ("You invoked an unsupported model or your request did not allow prompt caching").
    return ModelInfo(
        max_tokens=max_tokens,
        context_window=context,
        supports_prompt_cache=False,
        max_cache_points=0,
        min_tokens_per_cache_point=0,
        cachable_fields=(),
        allowed_ttls=("5m",),
        source=_NOT_IN_GUIDE,
        model_id=model_id,
        provider="anthropic",
    )


def _nova(model_id: str, max_tokens: int, context: int) -> ModelInfo:
    # Nova: 1K minimum, 4 points, system + messages only (tools cannot be cached), 5-minute TTL only.
    return ModelInfo(
        max_tokens=max_tokens,
        context_window=context,
        supports_prompt_cache=True,
        max_cache_points=4,
        min_tokens_per_cache_point=1_000,
        cachable_fields=("system", "messages"),
        allowed_ttls=("5m",),
        source=_GUIDE,
        model_id=model_id,
        provider="amazon",
    )


#: Known models, keyed by the stem of their base model id (matched as a prefix, longest first).
MODEL_INFO: dict[str, ModelInfo] = {
    info.model_id: info
    for info in (
        _claude("anthropic.claude-3-5-sonnet-20241022-v2:0", 8_192, 200_000, 1_024, False),
        _claude("anthropic.claude-3-5-haiku-20241022-v1:0", 8_192, 200_000, 2_048, False),
        _claude("anthropic.claude-3-7-sonnet-20250219-v1:0", 64_000, 200_000, 1_024, False),
        _claude("anthropic.claude-sonnet-4-20250514-v1:0", 64_000, 200_000, 1_024, False),
        _claude("anthropic.claude-sonnet-4-5-20250929-v1:0", 64_000, 200_000, 1_024, True),
        _claude("anthropic.claude-sonnet-4-6", 128_000, 1_000_000, 1_024, True),
        _claude("anthropic.claude-opus-4-20250514-v1:0", 32_000, 200_000, 1_024, False),
        _claude("anthropic.claude-opus-4-1-20250805-v1:0", 32_000, 200_000, 1_024, False),
        _claude("anthropic.claude-opus-4-5-20251101-v1:0", 64_000, 200_000, 4_096, True),
        _claude("anthropic.claude-opus-4-6-v1", 128_000, 1_000_000, 4_096, True),
        _claude("anthropic.claude-haiku-4-5-20251001-v1:0", 64_000, 200_000, 4_096, True),
        _claude("anthropic.claude-opus-4-7", 128_000, 1_000_000, 4_096, True),
        _claude("anthropic.claude-opus-4-8", 128_000, 1_000_000, 1_024, True),
        _claude("anthropic.claude-sonnet-5", 128_000, 1_000_000, 1_024, True),
        _claude("anthropic.claude-opus-5", 128_000, 1_000_000, 512, True),
        # Claude models on Bedrock without prompt caching (absent from the guide's table).
        _claude_uncached("anthropic.claude-3-haiku-20240307-v1:0", 4_096, 200_000),
        _claude_uncached("anthropic.claude-3-sonnet-20240229-v1:0", 4_096, 200_000),
        _claude_uncached("anthropic.claude-3-opus-20240229-v1:0", 4_096, 200_000),
        _claude_uncached("anthropic.claude-3-5-sonnet-20240620-v1:0", 8_192, 200_000),
        _claude_uncached("anthropic.claude-v2:1", 4_096, 200_000),
        _claude_uncached("anthropic.claude-v2", 4_096, 100_000),
        _claude_uncached("anthropic.claude-instant-v1", 4_096, 100_000),
        _nova("amazon.nova-micro-v1:0", 10_000, 128_000),
        _nova("amazon.nova-lite-v1:0", 10_000, 300_000),
        _nova("amazon.nova-pro-v1:0", 10_000, 300_000),
        _nova("amazon.nova-premier-v1:0", 32_000, 1_000_000),
    )
}


def _stem(model_id: str) -> str:
    """The prefix a table id matches by: without ``:<n>`` and the ``-v<n>`` version suffix
    (``anthropic.claude-3-haiku-20240307-v1:0`` -> ``anthropic.claude-3-haiku-20240307``), except where that would
    leave a bare family name (``anthropic.claude-v2:1`` keeps ``anthropic.claude-v2``, never ``anthropic.claude``)."""
    head = model_id.split(":")[0]
    stem = head.rsplit("-v", 1)[0] if "-v" in head else head
    return head if stem in ("anthropic.claude", "amazon.nova") else stem


_STEMS = sorted(((_stem(mid), mid) for mid in MODEL_INFO), key=lambda item: -len(item[0]))

_warned: set[str] = set()
_warned_lock = threading.Lock()


#: Anthropic API aliases (no date) -> the dated Anthropic API id of the same model (Anthropic "Models overview").
ANTHROPIC_ALIASES = {
    "claude-3-5-haiku-latest": "claude-3-5-haiku-20241022",
    "claude-3-7-sonnet-latest": "claude-3-7-sonnet-20250219",
    "claude-sonnet-4-0": "claude-sonnet-4-20250514",
    "claude-sonnet-4": "claude-sonnet-4-20250514",
    "claude-opus-4-0": "claude-opus-4-20250514",
    "claude-opus-4": "claude-opus-4-20250514",
    "claude-opus-4-1": "claude-opus-4-1-20250805",
    "claude-sonnet-4-5": "claude-sonnet-4-5-20250929",
    "claude-opus-4-5": "claude-opus-4-5-20251101",
    "claude-haiku-4-5": "claude-haiku-4-5-20251001",
}


def canonical_model_id(model_id: str) -> str:
    """``model_id`` as a Bedrock base model id: an Anthropic API id (``claude-...``, aliases resolved through
    ``ANTHROPIC_ALIASES``) gains the ``anthropic.`` provider prefix; anything else goes through
    `resolve_model_id` (ARN and cross-region prefix removed).

    ``"claude-opus-4-6"`` -> ``"anthropic.claude-opus-4-6"``; ``"claude-haiku-4-5"`` ->
    ``"anthropic.claude-haiku-4-5-20251001"``.

    Raises:
        TypeError / ValueError: ``model_id`` is not a non-empty string.
    """
    text = resolve_model_id(model_id)
    if text.startswith("claude-"):
        text = "anthropic." + ANTHROPIC_ALIASES.get(text, text)
    return text


def resolve_model_id(model_id: str) -> str:
    """The base model id inside ``model_id``: ARN resource part, then the cross-region prefix, removed.

    ``arn:aws:bedrock:us-east-1:123:inference-profile/us.anthropic.claude-...`` and
    ``eu.anthropic.claude-...`` both give ``anthropic.claude-...``.

    Raises:
        TypeError / ValueError: ``model_id`` is not a non-empty string.
    """
    if not isinstance(model_id, str):
        raise TypeError(f"model_id must be a str, got {type(model_id).__name__}: {model_id!r}")
    text = model_id.strip()
    if not text:
        raise ValueError("model_id must be a non-empty string, got ''")
    if text.startswith("arn:"):
        text = text.split("/", 1)[1] if "/" in text else text
    head, _, rest = text.partition(".")
    if rest and head in _REGION_PREFIXES:
        text = rest
    return text


def _default_for(base: str) -> ModelInfo:
    if base.startswith("anthropic.claude"):
        return _claude(base, 8_192, 200_000, 4_096, False).with_overrides(
            source="promptcache conservative default for an unknown Claude model (strictest minimum in " + _GUIDE + ")"
        )
    if base.startswith("amazon.nova"):
        return _nova(base, 10_000, 128_000).with_overrides(
            source="promptcache conservative default for an unknown Nova model (" + _GUIDE + ")"
        )
    return ModelInfo(
        max_tokens=4_096,
        context_window=128_000,
        supports_prompt_cache=False,
        max_cache_points=0,
        min_tokens_per_cache_point=4_096,
        cachable_fields=("system", "messages"),
        allowed_ttls=("5m",),
        source="promptcache conservative default: model not in " + _GUIDE,
        model_id=base,
    )


def get_model_info(model_id: str, **overrides: Any) -> ModelInfo:
    """The `ModelInfo` of a Bedrock model id, inference-profile id or ARN, with optional overrides.

    Args:
        model_id: e.g. ``"anthropic.claude-sonnet-4-20250514-v1:0"``, ``"us.amazon.nova-pro-v1:0"``, an ARN, or an
            Anthropic API id (``"claude-opus-4-6"``).
        **overrides: field values to replace (``min_tokens_per_cache_point=2048``, ``max_cache_points=2`` ...).

    Returns:
        The table entry (matched exactly, else by model stem so new version suffixes still match), or for an
        unknown model a conservative default: Claude -> 4 points, 4,096-token minimum, 5-minute TTL only;
        Nova -> the Nova limits; anything else -> ``supports_prompt_cache=False``. An unknown id logs one warning.

    Raises:
        TypeError / ValueError: bad ``model_id`` or override (named in the message).
    """
    base = canonical_model_id(model_id)
    info = MODEL_INFO.get(base)
    if info is None:
        for stem, full in _STEMS:
            if base.startswith(stem):
                info = MODEL_INFO[full]
                break
    if info is None:
        info = _default_for(base)
        with _warned_lock:
            first = base not in _warned
            _warned.add(base)
        if first:
            logger.warning(
                "promptcache: model %r is not in the Bedrock prompt-caching table; using a conservative "
                "default (%s). Pass cache_model_info=get_model_info(%r, min_tokens_per_cache_point=..., "
                "max_cache_points=...) to CachePointChatBedrockConverse / BedrockCachePoints to set its "
                "limits.",
                model_id,
                info.source,
                model_id,
            )
    return info.with_overrides(**overrides) if overrides else info

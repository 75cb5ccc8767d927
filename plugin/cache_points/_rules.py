"""Bedrock's cache-point placement rules, one table (`PLACEMENT_RULES`) per model family.

Each rule is a request layout Bedrock answers with a ``ValidationException`` (so the request fails as a whole), with
the families it applies to and its source. Placement (the strategies' ``point_allowed_after``, the tools and system
points of ``place_cache_points``) never produces one; validation (``scan_request``) refuses a caller's own point that
breaks one, before anything is sent. A test walks the table, so a rule added here is checked on every request.

Families (`family_of`, from ``ModelInfo.provider``): ``"claude"`` (Anthropic models), ``"nova"`` (Amazon
Nova), ``"other"`` (every other model; on the known ones Bedrock offers no prompt caching, so placement adds no
point there and only a caller's own points are checked).

Sources:

- [AWS-GUIDE] Amazon Bedrock user guide, "Prompt caching for faster model inference",
  https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html: the table "Supported models, regions,
  and limits" (maximum cache checkpoints per request; the fields each model caches: Nova caches ``system`` and
  ``messages``, not ``tools``), the 1-hour TTL section (which models offer ``1h``; longer TTLs before shorter
  ones), and the Converse examples (a checkpoint is its own content block placed after the content it caches).
- [AWS-API] Amazon Bedrock API reference, ``CachePointBlock``,
  https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CachePointBlock.html (``ttl``: ``5m`` |
  ``1h``), and ``ToolResultContentBlock`` (no ``cachePoint`` member: a point inside a tool result is not a block
  Bedrock has).
- [ANTHROPIC] Anthropic, "Prompt caching", https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
  ("Mixing different TTLs": longer TTLs must come before shorter ones; thinking blocks cannot carry a cache
  breakpoint). Bedrock serves Claude through this API: a ``cachePoint`` becomes ``cache_control`` on the block
  before it, so a point with no block of its own before it (first in its list, or right after another point) has
  nothing to mark and the translated request is invalid.
- [BEDROCK-ERROR] Bedrock's own ``ValidationException`` messages for these layouts: "Cache point cannot be inserted
  after reasoning block"; ``messages.N.content.M.type: Field required`` for a point right after a non-PDF
  ``document`` on Claude (reported with a reproduction in strands-agents/sdk-python issue 1966, "cachePoint after
  non-PDF document blocks causes ValidationException on Bedrock ConverseStream", and fixed there by placing the
  point before the document, verified against Bedrock in pull request 2001).
- [NOVA] Nova on Bedrock, as reported by AWS's own sample applications: aws-samples/bedrock-engineer pull
  request 71 (Nova: no ``cachePoint`` directly after a ``toolResult``; elsewhere in a message with tool results it
  is accepted) and aws-samples/generative-ai-use-cases pull request 1077 (Nova: a ``cachePoint`` just after an image
  is an error). Nova's ``toolConfig.tools`` refuses the key outright ("extraneous key [cachePoint] is not
  permitted", danny-avila/LibreChat issue 13838), matching [AWS-GUIDE]'s fields for Nova.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from promptcache.cache_points._model_info import ModelInfo

__all__ = ["FAMILIES", "PLACEMENT_RULES", "PlacementRule", "blocking_rule", "family_of", "point_blocker", "rules_for"]

#: The model families the table distinguishes.
FAMILIES = ("claude", "nova", "other")
_ALL = frozenset(FAMILIES)
_REASONING_TYPES = ("thinking", "redacted_thinking", "reasoning")


def _reasoning(block: Mapping[str, object]) -> str | None:
    if "reasoningContent" in block or block.get("type") in _REASONING_TYPES:
        return "a reasoning block"
    return None


def _non_pdf_document(block: Mapping[str, object]) -> str | None:
    document = block.get("document")
    if document is None or not isinstance(document, Mapping):  # None first: the ABC check is slow
        return None
    fmt = document.get("format")
    if isinstance(fmt, str) and fmt.lower() == "pdf":
        return None
    return f"a {fmt} document block" if isinstance(fmt, str) and fmt else "a non-PDF document block"


def _tool_result(block: Mapping[str, object]) -> str | None:
    return "a toolResult block" if "toolResult" in block or block.get("type") == "tool_result" else None


def _image(block: Mapping[str, object]) -> str | None:
    return "an image block" if "image" in block or block.get("type") in ("image", "image_url") else None


@dataclass(frozen=True)
class PlacementRule:
    """One layout Bedrock rejects.

    Attributes:
        name: a short stable id (``"after-reasoning"``), used in tests and messages.
        families: the families (`FAMILIES`) it applies to.
        forbids: the layout, in words.
        source: where the rule comes from (the tags of the module docstring).
        blocker: for a "not directly after a block of kind X" rule, ``blocker(block) -> str | None`` describes
            ``block`` ("a reasoning block") when it is of that kind, else ``None``; ``None`` for the other rules.
    """

    name: str
    families: frozenset[str]
    forbids: str
    source: str
    blocker: Callable[[Mapping[str, object]], str | None] | None = None


#: The table. Validation and placement read it; nothing else lists these rules.
PLACEMENT_RULES: tuple[PlacementRule, ...] = (
    PlacementRule(
        "uncached-model",
        _ALL,
        "any cachePoint on a model Bedrock offers no prompt caching on (ModelInfo.supports_prompt_cache False: the "
        "models absent from the guide's table, e.g. Claude 3 Haiku)",
        "[AWS-GUIDE] Supported models, regions, and limits; [BEDROCK-ERROR] You invoked an unsupported model or your "
        "request did not allow prompt caching",
    ),
    PlacementRule(
        "max-points",
        _ALL,
        "more cachePoint blocks in one request than min(the model's maximum, 4), the caller's own included",
        "[AWS-GUIDE] Supported models, regions, and limits: maximum cache checkpoints per request",
    ),
    PlacementRule(
        "ttl-value",
        _ALL,
        "a cachePoint ttl other than 5m / 1h, or 1h on a model that does not offer it",
        "[AWS-API] CachePointBlock.ttl; [AWS-GUIDE] 1-hour TTL section (ModelInfo.allowed_ttls)",
    ),
    PlacementRule(
        "ttl-order",
        _ALL,
        "a 1h point after a 5m point along toolConfig.tools -> system -> messages",
        "[AWS-GUIDE] 1-hour TTL section; [ANTHROPIC] Mixing different TTLs",
    ),
    PlacementRule(
        "uncachable-field",
        _ALL,
        "a point in a request field the model does not cache (Nova: toolConfig.tools)",
        "[AWS-GUIDE] Supported models, regions, and limits: fields that support prompt caching",
    ),
    PlacementRule(
        "first-block",
        _ALL,
        "a point as the first block of a message, of system, or of toolConfig.tools (nothing before it to cache)",
        "[AWS-GUIDE] Converse examples (a checkpoint follows the content it caches); [ANTHROPIC] cache_control "
        "marks a block",
    ),
    PlacementRule(
        "consecutive",
        _ALL,
        "a point directly after another point (the second has no block of its own to mark)",
        "[ANTHROPIC] cache_control marks a block; [AWS-GUIDE] Converse examples",
    ),
    PlacementRule(
        "after-reasoning",
        _ALL,
        "a point directly after a reasoning block",
        "[BEDROCK-ERROR] Cache point cannot be inserted after reasoning block; [ANTHROPIC] thinking blocks",
        _reasoning,
    ),
    PlacementRule(
        "after-non-pdf-document",
        frozenset({"claude"}),
        "a point directly after a document block whose format is not pdf (txt, md, csv, html, doc, docx, xls, xlsx)",
        "[BEDROCK-ERROR] messages.N.content.M.type: Field required (strands-agents/sdk-python issue 1966, PR 2001)",
        _non_pdf_document,
    ),
    PlacementRule(
        "after-tool-result",
        frozenset({"nova"}),
        "a point directly after a toolResult block",
        "[NOVA]",
        _tool_result,
    ),
    PlacementRule(
        "after-image",
        frozenset({"nova"}),
        "a point directly after an image block",
        "[NOVA]",
        _image,
    ),
)

_BY_FAMILY = {f: tuple(r for r in PLACEMENT_RULES if f in r.families) for f in FAMILIES}
_BLOCKERS = {f: tuple(r for r in _BY_FAMILY[f] if r.blocker is not None) for f in FAMILIES}


def family_of(model_info: ModelInfo) -> str:
    """``"claude"`` for ``provider="anthropic"``, ``"nova"`` for ``"amazon"``, else ``"other"``."""
    provider = model_info.provider
    return "claude" if provider == "anthropic" else "nova" if provider == "amazon" else "other"


def rules_for(family: str) -> tuple[PlacementRule, ...]:
    """The rules of `PLACEMENT_RULES` that apply to ``family`` (one of `FAMILIES`).

    Raises:
        ValueError: an unknown family (the known ones named).
    """
    try:
        return _BY_FAMILY[family]
    except KeyError:
        raise ValueError(f"unknown model family {family!r}; known: {list(FAMILIES)}") from None


def blocking_rule(block: object, family: str) -> tuple[PlacementRule, str] | None:
    """The rule of ``family`` that forbids a cache point directly after ``block``, with ``block`` described
    (``"a reasoning block"``); ``None`` when a point may follow it."""
    if type(block) is not dict and not isinstance(block, Mapping):
        return None
    for rule in _BLOCKERS[family]:
        why = rule.blocker(block) if rule.blocker is not None else None
        if why is not None:
            return rule, why
    return None


# The blockers above read the values of a block's ``type`` and ``document`` keys only; of every other key they test
# the presence. So a plain dict block with one other key (``{"toolUse": {...}}``) gets the verdict of its key,
# kept here per (family, key) by `point_blocker` (a new blocker that reads another key's value must be added here).
_VALUES_READ = frozenset({"type", "document"})
_ONE_KEY_VERDICTS: dict[tuple[str, str], str | None] = {}
_ONE_KEY_LIMIT = 1_024  # verdicts kept at most (a few block kinds per family in practice): a bound, not measured


def point_blocker(block: object, family: str) -> str | None:
    """Why ``family``'s models reject a cache point directly after ``block`` (``"a reasoning block"``), or ``None``
    when a point may follow it: the ``blocker`` of every rule of the table for ``family``."""
    if type(block) is dict and len(block) == 1:
        key = next(iter(block))
        if type(key) is str and key not in _VALUES_READ:
            try:
                return _ONE_KEY_VERDICTS[family, key]
            except KeyError:
                found = blocking_rule(block, family)
                why = None if found is None else found[1]
                if len(_ONE_KEY_VERDICTS) < _ONE_KEY_LIMIT:
                    _ONE_KEY_VERDICTS[family, key] = why
                return why
    found = blocking_rule(block, family)
    return None if found is None else found[1]

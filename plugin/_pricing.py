"""Bedrock on-demand prices per model, and the prompt-cache multipliers, with their sources.

Sources (read 2025; prices are USD per 1,000,000 tokens, on-demand, US East (N. Virginia)):

- Amazon Bedrock pricing, https://aws.amazon.com/bedrock/pricing/ (Anthropic and Amazon tabs: input, output,
  "cache write" and "cache read" per model).
- Amazon Bedrock user guide, "Prompt caching for faster model inference",
  https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html — Claude: cache writes cost more than
  input, reads less; Nova: writes at no extra charge, reads at a 75 % discount.
- Anthropic, "Prompt caching" pricing table, https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching
  — 5-minute writes 1.25x base input, 1-hour writes 2x, reads 0.1x (Bedrock bills Claude at the same ratios).

An unknown model id raises ``KeyError`` naming it and listing the known ones: a silent default price would make
every figure of a report wrong.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ModelPrice", "price_for", "KNOWN_PRICES", "base_model_id"]


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per 1M tokens.

    Attributes:
        input: plain input tokens; output: output tokens.
        write_5m / write_1h: cache-write tokens with a 5-minute / 1-hour TTL (``None``: TTL not offered).
        read: cache-read tokens.
        family: ``"claude"`` or ``"nova"``.
    """

    input: float
    output: float
    write_5m: float
    write_1h: float | None
    read: float
    family: str

    def write(self, ttl_s: float) -> float:
        """Write price for a TTL in seconds (``> 300`` is the 1-hour tier). Raises ``ValueError`` if not offered."""
        if ttl_s <= 300:
            return self.write_5m
        if self.write_1h is None:
            raise ValueError(f"a {ttl_s:g}-second cache TTL is not offered for this model")
        return self.write_1h


def _claude(input_: float, output: float, one_hour: bool = True) -> ModelPrice:
    # Anthropic multipliers: write 1.25x (5 m) / 2x (1 h), read 0.1x of the base input price.
    return ModelPrice(
        input_,
        output,
        round(input_ * 1.25, 6),
        round(input_ * 2.0, 6) if one_hour else None,
        round(input_ * 0.1, 6),
        "claude",
    )


def _nova(input_: float, output: float) -> ModelPrice:
    # Nova: cache writes are billed like input (1x), reads at a 75 % discount (0.25x).
    return ModelPrice(input_, output, input_, None, round(input_ * 0.25, 6), "nova")


#: Base model id (no region prefix, no version suffix after the date) -> price.
KNOWN_PRICES: dict[str, ModelPrice] = {
    "anthropic.claude-3-5-haiku-20241022": _claude(0.80, 4.00, one_hour=False),
    "anthropic.claude-3-7-sonnet-20250219": _claude(3.00, 15.00, one_hour=False),
    "anthropic.claude-sonnet-4-20250514": _claude(3.00, 15.00, one_hour=False),
    "anthropic.claude-sonnet-4-5-20250929": _claude(3.00, 15.00),
    "anthropic.claude-sonnet-4-6": _claude(3.00, 15.00),
    "anthropic.claude-3-5-sonnet-20241022": _claude(3.00, 15.00, one_hour=False),
    "anthropic.claude-opus-4-20250514": _claude(15.00, 75.00, one_hour=False),
    "anthropic.claude-opus-4-1-20250805": _claude(15.00, 75.00, one_hour=False),
    "anthropic.claude-opus-4-5-20251101": _claude(5.00, 25.00),
    "anthropic.claude-opus-4-6": _claude(5.00, 25.00),
    "anthropic.claude-haiku-4-5-20251001": _claude(1.00, 5.00),
    "amazon.nova-micro-v1": _nova(0.035, 0.14),
    "amazon.nova-lite-v1": _nova(0.06, 0.24),
    "amazon.nova-pro-v1": _nova(0.80, 3.20),
    "amazon.nova-premier-v1": _nova(2.50, 12.50),
}

_REGION_PREFIXES = ("us.", "eu.", "apac.", "global.", "us-gov.", "jp.", "au.", "ca.")


def base_model_id(model_id: str) -> str:
    """``model_id`` without ARN, cross-region prefix (``us.``, ``eu.``, ``global.`` ...) and ``-v1:0`` / ``:0``
    version suffix: ``"us.anthropic.claude-sonnet-4-20250514-v1:0"`` -> ``"anthropic.claude-sonnet-4-20250514"``.
    Anthropic API ids gain the ``anthropic.`` prefix (``"claude-opus-4-6"`` -> ``"anthropic.claude-opus-4-6"``;
    aliases resolve, ``promptcache.cache_points._model_info.ANTHROPIC_ALIASES``): the Anthropic API bills these
    models at the same list prices as Bedrock's on-demand tier."""
    text = model_id.strip()
    if text.startswith("claude-"):
        from promptcache.cache_points._model_info import ANTHROPIC_ALIASES

        text = "anthropic." + ANTHROPIC_ALIASES.get(text, text)
    if text.startswith("arn:"):
        text = text.rsplit("/", 1)[-1]
    for prefix in _REGION_PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix) :]
            break
    text = text.split(":", 1)[0]
    if text.startswith("anthropic.") and text.rsplit("-", 1)[-1].startswith("v") and text.count("-") > 2:
        text = text.rsplit("-", 1)[0]
    return text


def price_for(model_id: str) -> ModelPrice:
    """The price of ``model_id`` (any regional prefix / ARN / version suffix). Raises ``KeyError`` if unknown."""
    base = base_model_id(model_id)
    try:
        return KNOWN_PRICES[base]
    except KeyError:
        read_as = f" (read as {base!r})" if base != model_id else ""
        raise KeyError(
            f"no Bedrock price known for model {model_id!r}{read_as}; known: " + ", ".join(sorted(KNOWN_PRICES))
        ) from None

"""Prices per model for the replay: which provider's table a model id belongs to, and its dated price.

The tables and their sources are in ``promptcache._price_tables`` (one per provider: Anthropic API, Amazon
Bedrock, OpenAI; every row with its page and the day it was read). A model id is priced from its provider's table:

- ``claude-...`` (the Anthropic API, as Claude Code and the Anthropic SDK name models) -> the Anthropic table;
- ``gpt-...``, ``o1`` / ``o3`` / ``o4-mini``, ``chatgpt-...`` (optionally ``openai/``) -> the OpenAI table;
- anything else (``anthropic.`` / ``amazon.`` ids, cross-Region prefixes, ARNs) -> the Bedrock table, with the
  regional-endpoint premium where the row has one and the id is not a ``global.`` profile.

An unknown model, or one listed without a confirmed price, raises ``KeyError`` with one line that names the model
and says how to give its prices (``--models FILE``): a silent default price, or $0, would make every figure of a
report wrong.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from ._price_tables import ANTHROPIC, BEDROCK, OPENAI, REGIONAL_PREMIUM, UNPRICED, Row

__all__ = ["ModelPrice", "price_for", "KNOWN_PRICES", "base_model_id", "price_key", "provider_of", "MODELS_HINT"]

#: What a refusal tells the user to do.
MODELS_HINT = (
    "give its prices with --models FILE (a JSON or TOML table {model: {input, output, cache_write_5m, "
    "cache_write_1h, cache_read}}, USD per 1M tokens)"
)


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """USD per 1M tokens.

    Attributes:
        input: plain input tokens; output: output tokens.
        write_5m / write_1h: cache-write tokens with a 5-minute / 1-hour TTL (``None``: TTL not offered).
        read: cache-read tokens.
        family: ``"claude"``, ``"nova"`` or ``"openai"``.
        provider: ``"anthropic"``, ``"bedrock"``, ``"openai"`` or ``"user"`` (a ``--models`` entry).
        source / as_of: the page the price was read from and the day (empty for user prices).
        long_above: prompt tokens above which ``long`` applies (``None``: one tier).
        long: the prices of a request whose prompt (input + cache read + cache write) exceeds ``long_above``.
    """

    input: float
    output: float
    write_5m: float
    write_1h: float | None
    read: float
    family: str
    provider: str = "bedrock"
    source: str = ""
    as_of: str = ""
    long_above: int | None = None
    long: ModelPrice | None = None

    def write(self, ttl_s: float) -> float:
        """Write price for a TTL in seconds (``> 300`` is the 1-hour tier). Raises ``ValueError`` if not offered."""
        if ttl_s <= 300:
            return self.write_5m
        if self.write_1h is None:
            raise ValueError(f"a {ttl_s:g}-second cache TTL is not offered for this model")
        return self.write_1h

    def at(self, prompt_tokens: int) -> ModelPrice:
        """The tier that bills a request of ``prompt_tokens`` (input + cache read + cache write): ``long`` above
        ``long_above``, else these prices."""
        if self.long is not None and self.long_above is not None and prompt_tokens > self.long_above:
            return self.long
        return self


_REGION_PREFIXES = ("us.", "eu.", "apac.", "global.", "us-gov.", "jp.", "au.", "ca.", "in.")
_DATE = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
_OPENAI = re.compile(r"^(gpt-|o\d(-|$)|chatgpt-)")


def base_model_id(model_id: str) -> str:
    """``model_id`` without ARN, cross-region prefix (``us.``, ``eu.``, ``global.`` ...) and ``-v1:0`` / ``:0``
    version suffix: ``"us.anthropic.claude-sonnet-4-20250514-v1:0"`` -> ``"anthropic.claude-sonnet-4-20250514"``.
    Anthropic API ids gain the ``anthropic.`` prefix (``"claude-opus-4-6"`` -> ``"anthropic.claude-opus-4-6"``;
    aliases resolve, ``promptcache.cache_points._model_info.ANTHROPIC_ALIASES``; a ``[1m]`` context suffix is
    dropped), so cache rules are looked up in one table; prices are not (``price_for``)."""
    text = model_id.strip()
    if text.endswith("]") and "[" in text:
        text = text[: text.rindex("[")]
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


def provider_of(model_id: str) -> str:
    """``"anthropic"``, ``"openai"`` or ``"bedrock"``: whose price table ``model_id`` belongs to (module
    docstring)."""
    text = model_id.strip().removeprefix("openai/")
    if text.startswith("claude-"):
        return "anthropic"
    return "openai" if _OPENAI.match(text) else "bedrock"


def price_key(model_id: str) -> tuple[str, str]:
    """``(provider, stem)``: the table and the row ``model_id`` is priced from (the stem has no date, version,
    region prefix or ARN): ``"claude-haiku-4-5-20251001"`` -> ``("anthropic", "claude-haiku-4-5")``,
    ``"us.anthropic.claude-sonnet-4-5-20250929-v1:0"`` -> ``("bedrock", "anthropic.claude-sonnet-4-5")``,
    ``"gpt-4o-2024-08-06"`` -> ``("openai", "gpt-4o")``."""
    provider = provider_of(model_id)
    if provider == "openai":
        return provider, _DATE.sub("", model_id.strip().removeprefix("openai/"))
    stem = _DATE.sub("", base_model_id(model_id))
    if stem.startswith("amazon.nova"):
        stem = re.sub(r"-v\d+$", "", stem)
    return provider, stem.removeprefix("anthropic.") if provider == "anthropic" else stem


def _is_global(model_id: str) -> bool:
    text = model_id.strip()
    if text.startswith("arn:"):
        text = text.rsplit("/", 1)[-1]
    return text.startswith("global.")


def _price(row: Row, provider: str, factor: float = 1.0) -> ModelPrice:
    def scaled(v: float | None, f: float) -> float | None:
        return None if v is None else round(v * f, 6)

    def make(fin: float, fout: float) -> ModelPrice:
        f = fin * factor
        return ModelPrice(
            round(row.input * f, 6),
            round(row.output * fout * factor, 6),
            round(row.write_5m * f, 6),
            scaled(row.write_1h, f),
            round(row.read * f, 6),
            row.family,
            provider,
            row.source,
            row.as_of,
        )

    base = make(1.0, 1.0)
    if row.long_above is None:
        return base
    return dataclasses.replace(base, long_above=row.long_above, long=make(row.long_factor_in, row.long_factor_out))


_TABLES = {"anthropic": ANTHROPIC, "bedrock": BEDROCK, "openai": OPENAI}
_NAMES = {"anthropic": "Anthropic API", "bedrock": "Amazon Bedrock", "openai": "OpenAI"}


def price_for(model_id: str) -> ModelPrice:
    """The price of ``model_id`` from its provider's table (module docstring).

    Raises:
        KeyError: unknown model, or a model listed without a confirmed price; the one-line message names the
            model, the table it was looked up in, and ``--models FILE``.
    """
    provider, stem = price_key(model_id)
    row = _TABLES[provider].get(stem)
    if row is None:
        why = UNPRICED.get((provider, stem))
        detail = f"listed without a price ({why})" if why else "not in the price table"
        raise KeyError(
            f"no {_NAMES[provider]} price for model {model_id!r} (read as {stem!r}): {detail}; {MODELS_HINT}"
        )
    premium = REGIONAL_PREMIUM if provider == "bedrock" and row.regional_premium and not _is_global(model_id) else 1.0
    return _price(row, provider, premium)


#: Every priced model stem -> its price (Anthropic API, Bedrock global endpoint, OpenAI).
KNOWN_PRICES: dict[str, ModelPrice] = {
    stem: _price(row, provider) for provider, table in _TABLES.items() for stem, row in table.items()
}

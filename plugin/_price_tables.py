"""The replay's price tables: one per provider (Anthropic API, Amazon Bedrock, OpenAI), each row dated and sourced.

USD per 1,000,000 tokens. Every row names the page it was read from (``source``) and the day it was read
(``as_of``). A model whose price could not be confirmed is listed in ``UNPRICED`` (with the reason) and refused by
``promptcache._pricing.price_for``: a guessed price would make every figure of a report wrong.

- **Anthropic API** (Claude Code sessions, Message Batches results, any ``claude-...`` id):
  https://platform.claude.com/docs/en/about-claude/pricing, table "Model pricing" (base input, 5-minute and 1-hour
  cache writes, cache hits, output) and "Long context pricing" (Sonnet 4 and 4.5: a request over 200,000 prompt
  tokens, cache reads and writes included, is billed at 2x input and 1.5x output, cache prices scaled with input);
  per-model pages such as https://platform.claude.com/docs/en/about-claude/models/whats-new-opus-5.
  Minimum tokens per cache point (``ANTHROPIC_MIN_TOKENS``): https://platform.claude.com/docs/en/build-with-claude/prompt-caching
  ("Cache limitations"): 4,096 for Opus 4.5 / 4.6 and Haiku 4.5, 1,024 for Sonnet 4.x, Opus 4 / 4.1 and Sonnet 3.7,
  2,048 for Haiku 3 / 3.5; 2,048 for Opus 4.7; 1,024 for Opus 4.8 ("What's new in Claude Opus 4.8": "a lower
  1,024-token minimum cacheable prompt length") and Sonnet 5; 512 for Opus 5. Every model on the Anthropic API
  sells the 1-hour TTL.
- **Amazon Bedrock** (invocation logs, ``anthropic.`` / ``amazon.`` ids, inference profiles):
  https://aws.amazon.com/bedrock/pricing/ (on-demand, US East), cache multipliers from the Bedrock user guide
  https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html (Claude: 5-minute writes 1.25x, 1-hour
  writes 2x, reads 0.1x; Nova: writes at the input price, reads 0.25x). The listed Claude prices are the global
  cross-Region ones; for Claude Sonnet 4.5, Haiku 4.5, Opus 4.5 and later, geographic (``us.``, ``eu.`` ...) and
  in-Region endpoints cost 10 % more (``REGIONAL_PREMIUM``; https://docs.aws.amazon.com/bedrock/latest/userguide/global-cross-region-inference.html:
  global inference "offers approximately 10% savings on both input and output token pricing compared to geographic
  cross-Region inference"). Cache rules for Bedrock come from ``promptcache.cache_points`` (the user guide's table).
- **OpenAI** (Chat Completions / Responses logs, ``gpt-...`` / ``o3`` / ``o4-mini`` ids):
  https://developers.openai.com/api/docs/pricing (input, cached input, output; standard tier). OpenAI bills no cache
  write: the write price is the input price. Cache rules in ``promptcache.replay._openai_cache``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ANTHROPIC",
    "ANTHROPIC_MIN_TOKENS",
    "BEDROCK",
    "OPENAI",
    "REGIONAL_PREMIUM",
    "Row",
    "UNPRICED",
]

_READ = "2026-12-01"
_ANTHROPIC_URL = "https://platform.claude.com/docs/en/about-claude/pricing"
_AWS_URL = "https://aws.amazon.com/bedrock/pricing/"
_OPENAI_URL = "https://developers.openai.com/api/docs/pricing"
#: Bedrock's geographic / in-Region endpoints over the global cross-Region price, for the models marked
#: ``regional_premium`` (see the module docstring).
REGIONAL_PREMIUM = 1.10


@dataclass(frozen=True, slots=True)
class Row:
    """One dated price row. USD per 1M tokens.

    Attributes:
        input / output: plain input and output tokens.
        write_5m / write_1h: cache writes with a 5-minute / 1-hour TTL (``None``: the TTL is not sold).
        read: cache reads (hits and refreshes).
        family: ``"claude"``, ``"nova"`` or ``"openai"``.
        source / as_of: the page the row was read from and the day.
        long_above / long_factor_in / long_factor_out: a long-context tier: a request whose prompt (input + cache
            read + cache write) exceeds ``long_above`` tokens is billed ``long_factor_in`` x every input-side price
            and ``long_factor_out`` x output (``None``: no tier).
        regional_premium: Bedrock only: geographic and in-Region endpoints cost ``REGIONAL_PREMIUM`` x.
    """

    input: float
    output: float
    write_5m: float
    write_1h: float | None
    read: float
    family: str
    source: str
    as_of: str = _READ
    long_above: int | None = None
    long_factor_in: float = 1.0
    long_factor_out: float = 1.0
    regional_premium: bool = False


def _anthropic(input_: float, output: float, w5: float, w1: float, read: float, long: bool = False) -> Row:
    if long:  # "Long context pricing": > 200K prompt tokens -> input 2x (cache prices with it), output 1.5x
        return Row(input_, output, w5, w1, read, "claude", _ANTHROPIC_URL, long_above=200_000,
                   long_factor_in=2.0, long_factor_out=1.5)  # fmt: skip
    return Row(input_, output, w5, w1, read, "claude", _ANTHROPIC_URL)


#: Anthropic API, keyed by model stem (``promptcache._pricing.price_key``: no ``anthropic.`` provider
#: prefix handling needed by callers, no date suffix).
ANTHROPIC: dict[str, Row] = {
    "claude-opus-5": _anthropic(5.00, 25.00, 6.25, 10.00, 0.50),
    "claude-opus-4-8": _anthropic(5.00, 25.00, 6.25, 10.00, 0.50),
    "claude-opus-4-7": _anthropic(5.00, 25.00, 6.25, 10.00, 0.50),
    "claude-opus-4-6": _anthropic(5.00, 25.00, 6.25, 10.00, 0.50),
    "claude-opus-4-5": _anthropic(5.00, 25.00, 6.25, 10.00, 0.50),
    "claude-opus-4-1": _anthropic(15.00, 75.00, 18.75, 30.00, 1.50),
    "claude-opus-4": _anthropic(15.00, 75.00, 18.75, 30.00, 1.50),
    "claude-sonnet-5": _anthropic(2.00, 10.00, 2.50, 4.00, 0.20),
    "claude-sonnet-4-6": _anthropic(3.00, 15.00, 3.75, 6.00, 0.30),
    "claude-sonnet-4-5": _anthropic(3.00, 15.00, 3.75, 6.00, 0.30, long=True),
    "claude-sonnet-4": _anthropic(3.00, 15.00, 3.75, 6.00, 0.30, long=True),
    "claude-3-7-sonnet": _anthropic(3.00, 15.00, 3.75, 6.00, 0.30),
    "claude-haiku-4-5": _anthropic(1.00, 5.00, 1.25, 2.00, 0.10),
    "claude-3-5-haiku": _anthropic(0.80, 4.00, 1.00, 1.60, 0.08),
    "claude-3-haiku": _anthropic(0.25, 1.25, 0.30, 0.50, 0.03),
}

#: Minimum tokens per cache point on the Anthropic API (sources in the module docstring).
ANTHROPIC_MIN_TOKENS: dict[str, int] = {
    "claude-opus-5": 512,
    "claude-opus-4-8": 1_024,
    "claude-opus-4-7": 2_048,
    "claude-opus-4-6": 4_096,
    "claude-opus-4-5": 4_096,
    "claude-opus-4-1": 1_024,
    "claude-opus-4": 1_024,
    "claude-sonnet-5": 1_024,
    "claude-sonnet-4-6": 1_024,
    "claude-sonnet-4-5": 1_024,
    "claude-sonnet-4": 1_024,
    "claude-3-7-sonnet": 1_024,
    "claude-haiku-4-5": 4_096,
    "claude-3-5-haiku": 2_048,
    "claude-3-haiku": 2_048,
}


def _bedrock_claude(input_: float, output: float, one_hour: bool, premium: bool) -> Row:
    # Bedrock Claude multipliers (user guide): writes 1.25x (5 min) / 2x (1 h), reads 0.1x of input.
    return Row(
        input_,
        output,
        round(input_ * 1.25, 6),
        round(input_ * 2.0, 6) if one_hour else None,
        round(input_ * 0.1, 6),
        "claude",
        _AWS_URL,
        regional_premium=premium,
    )


def _nova(input_: float, output: float) -> Row:
    # Nova: cache writes billed like input (1x), reads at a 75 % discount (0.25x).
    return Row(input_, output, input_, None, round(input_ * 0.25, 6), "nova", _AWS_URL)


#: Amazon Bedrock on-demand, keyed by base model stem (no region prefix, version or date suffix).
BEDROCK: dict[str, Row] = {
    "anthropic.claude-3-5-haiku": _bedrock_claude(0.80, 4.00, False, False),
    "anthropic.claude-3-7-sonnet": _bedrock_claude(3.00, 15.00, False, False),
    "anthropic.claude-3-5-sonnet": _bedrock_claude(3.00, 15.00, False, False),
    "anthropic.claude-sonnet-4": _bedrock_claude(3.00, 15.00, False, False),
    "anthropic.claude-opus-4": _bedrock_claude(15.00, 75.00, False, False),
    "anthropic.claude-opus-4-1": _bedrock_claude(15.00, 75.00, False, False),
    "anthropic.claude-sonnet-4-5": _bedrock_claude(3.00, 15.00, True, True),
    "anthropic.claude-sonnet-4-6": _bedrock_claude(3.00, 15.00, True, True),
    "anthropic.claude-haiku-4-5": _bedrock_claude(1.00, 5.00, True, True),
    "anthropic.claude-opus-4-5": _bedrock_claude(5.00, 25.00, True, True),
    "anthropic.claude-opus-4-6": _bedrock_claude(5.00, 25.00, True, True),
    "anthropic.claude-opus-4-7": _bedrock_claude(5.00, 25.00, True, True),
    "amazon.nova-micro": _nova(0.035, 0.14),
    "amazon.nova-lite": _nova(0.06, 0.24),
    "amazon.nova-pro": _nova(0.80, 3.20),
    "amazon.nova-premier": _nova(2.50, 12.50),
}


def _openai(input_: float, cached: float, output: float) -> Row:
    return Row(input_, output, input_, None, cached, "openai", _OPENAI_URL)


#: OpenAI standard tier, keyed by model name without a date suffix.
OPENAI: dict[str, Row] = {
    "gpt-4o": _openai(2.50, 1.25, 10.00),
    "gpt-4o-mini": _openai(0.15, 0.075, 0.60),
    "gpt-4.1": _openai(2.00, 0.50, 8.00),
    "gpt-4.1-mini": _openai(0.40, 0.10, 1.60),
    "gpt-4.1-nano": _openai(0.10, 0.025, 0.40),
    "gpt-5": _openai(1.25, 0.125, 10.00),
    "gpt-5-mini": _openai(0.25, 0.025, 2.00),
    "gpt-5-nano": _openai(0.05, 0.005, 0.40),
    "gpt-5.1": _openai(1.25, 0.125, 10.00),
    "gpt-5.2": _openai(1.75, 0.175, 14.00),
    "gpt-5.4": _openai(2.50, 0.25, 15.00),
    "gpt-5.4-mini": _openai(0.75, 0.075, 4.50),
    "gpt-5.4-nano": _openai(0.20, 0.02, 1.25),
    "gpt-5.5": _openai(5.00, 0.50, 30.00),
    "o3": _openai(2.00, 0.50, 8.00),
    "o4-mini": _openai(1.10, 0.275, 4.40),
}

#: Models the tables know but cannot price: ``(provider, stem) -> why``. ``price_for`` refuses them.
UNPRICED: dict[tuple[str, str], str] = {
    ("bedrock", "anthropic.claude-opus-4-8"): f"no on-demand price on {_AWS_URL} as read {_READ}",
    ("bedrock", "anthropic.claude-opus-5"): f"no on-demand price on {_AWS_URL} as read {_READ}",
    ("bedrock", "anthropic.claude-sonnet-5"): f"no on-demand price on {_AWS_URL} as read {_READ}",
}

"""The price tables: one per provider, every row dated and sourced, the documented tiers and premiums, and one-line
refusals for models without a confirmed price."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import main
from promptcache._price_tables import ANTHROPIC, BEDROCK, OPENAI, UNPRICED
from promptcache._pricing import KNOWN_PRICES, price_for, price_key
from promptcache.replay._model_table import ModelTable


def test_every_row_names_its_page_and_the_day_it_was_read() -> None:
    pages = {"anthropic": "platform.claude.com", "bedrock": "aws.amazon.com", "openai": "developers.openai.com"}
    for provider, table in (("anthropic", ANTHROPIC), ("bedrock", BEDROCK), ("openai", OPENAI)):
        for stem, row in table.items():
            assert pages[provider] in row.source and row.as_of == "2026-12-01", (provider, stem)
    assert len(KNOWN_PRICES) == len(ANTHROPIC) + len(BEDROCK) + len(OPENAI)


@pytest.mark.parametrize(
    ("model_id", "key"),
    [
        ("claude-opus-4-7", ("anthropic", "claude-opus-4-7")),
        ("claude-sonnet-4-5", ("anthropic", "claude-sonnet-4-5")),
        ("claude-3-5-haiku-20241022", ("anthropic", "claude-3-5-haiku")),
        ("claude-opus-4-6[1m]", ("anthropic", "claude-opus-4-6")),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", ("bedrock", "anthropic.claude-sonnet-4-5")),
        ("global.anthropic.claude-opus-4-6-v1", ("bedrock", "anthropic.claude-opus-4-6")),
        ("amazon.nova-pro-v1:0", ("bedrock", "amazon.nova-pro")),
        ("gpt-4o-2024-08-06", ("openai", "gpt-4o")),
        ("openai/gpt-4.1-mini", ("openai", "gpt-4.1-mini")),
        ("o4-mini", ("openai", "o4-mini")),
    ],
)
def test_each_id_is_priced_from_its_providers_table(model_id: str, key: tuple[str, str]) -> None:
    assert price_key(model_id) == key


def test_newer_claude_models_are_priced_on_the_anthropic_api() -> None:
    expected = {  # input, 5 m write, 1 h write, read, output (platform.claude.com pricing, read 2026-12-01)
        "claude-opus-5": (5.0, 6.25, 10.0, 0.5, 25.0),
        "claude-opus-4-8": (5.0, 6.25, 10.0, 0.5, 25.0),
        "claude-opus-4-7": (5.0, 6.25, 10.0, 0.5, 25.0),
        "claude-opus-4-5-20251101": (5.0, 6.25, 10.0, 0.5, 25.0),
        "claude-sonnet-5": (2.0, 2.5, 4.0, 0.2, 10.0),
        "claude-sonnet-4-5-20250929": (3.0, 3.75, 6.0, 0.3, 15.0),
        "claude-haiku-4-5-20251001": (1.0, 1.25, 2.0, 0.1, 5.0),
        "claude-3-5-haiku-20241022": (0.8, 1.0, 1.6, 0.08, 4.0),
    }
    for model_id, prices in expected.items():
        p = price_for(model_id)
        assert (p.input, p.write_5m, p.write_1h, p.read, p.output) == prices, model_id


def test_one_hour_writes_are_twice_input_not_the_five_minute_price() -> None:
    for model_id in ("claude-opus-4-6", "claude-sonnet-4-5", "global.anthropic.claude-sonnet-4-5-20250929-v1:0"):
        p = price_for(model_id)
        assert p.write_1h == pytest.approx(2 * p.input) and p.write_5m == pytest.approx(1.25 * p.input)
    # cache reads are not always 0.1x: Nova reads at 0.25x, OpenAI gpt-4o at 0.5x, gpt-4.1 at 0.25x
    assert price_for("amazon.nova-pro-v1:0").read == pytest.approx(0.25 * 0.80)
    assert price_for("gpt-4o").read == 1.25 and price_for("gpt-4.1").read == 0.5 and price_for("gpt-5").read == 0.125


def test_bedrock_regional_endpoints_cost_ten_percent_more_for_4_5_and_later() -> None:
    glob = price_for("global.anthropic.claude-sonnet-4-5-20250929-v1:0")
    geo = price_for("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
    local = price_for("anthropic.claude-sonnet-4-5-20250929-v1:0")
    assert (glob.input, geo.input, local.input) == (3.0, 3.3, 3.3)
    assert (geo.write_5m, geo.write_1h, geo.read, geo.output) == (4.125, 6.6, 0.33, 16.5)
    arn = "arn:aws:bedrock:us-east-1:111122223333:inference-profile/global.anthropic.claude-opus-4-6-v1"
    assert price_for(arn).input == 5.0
    # models before 4.5 keep one price on every endpoint
    assert price_for("us.anthropic.claude-sonnet-4-20250514-v1:0").input == 3.0


def test_long_context_tier_bills_the_whole_request_above_200k() -> None:
    sonnet = price_for("claude-sonnet-4-5")
    assert sonnet.at(200_000) is sonnet
    long = sonnet.at(200_001)
    assert (long.input, long.write_5m, long.write_1h, long.read, long.output) == (6.0, 7.5, 12.0, 0.6, 22.5)
    assert price_for("claude-opus-4-6").at(900_000).input == 5.0  # no tier on the 1M-context Opus 4.6


@pytest.mark.parametrize("model_id", ["us.anthropic.claude-opus-4-8", "anthropic.claude-sonnet-5", "claude-nova-9"])
def test_a_model_without_a_confirmed_price_is_refused_in_one_line(model_id: str) -> None:
    with pytest.raises(KeyError) as err:
        price_for(model_id)
    message = err.value.args[0]
    assert "\n" not in message and "--models FILE" in message and repr(model_id) in message
    if price_key(model_id) in UNPRICED:
        assert "listed without a price" in message


def test_the_cli_refuses_an_unpriced_model_named_in_the_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    conv = [
        {"role": "user", "content": "hello " * 50},
        {"role": "assistant", "content": "hi", "model": "us.anthropic.claude-opus-4-8"},
    ]
    path = tmp_path / "c.json"
    path.write_text(json.dumps([{"id": "c", "messages": conv}]))
    assert main(["replay", str(path), "--out", str(tmp_path / "o"), "--no-chart"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "us.anthropic.claude-opus-4-8" in err and "--models FILE" in err
    models = tmp_path / "m.json"
    prices = {"input": 5, "output": 25, "cache_write_5m": 6.25, "cache_write_1h": 10, "cache_read": 0.5}
    models.write_text(json.dumps({"us.anthropic.claude-opus-4-8": prices}))
    out = str(tmp_path / "o")
    assert main(["replay", str(path), "--models", str(models), "--out", out, "--no-chart"]) == 0
    assert ModelTable({"anthropic.claude-opus-4-8": prices}).price("us.anthropic.claude-opus-4-8").input == 5.0


def test_anthropic_api_minimums_and_one_hour_ttl() -> None:
    table = ModelTable()
    expected = {  # platform.claude.com "Prompt caching" (Opus 4.7: 2,048 on the API; Bedrock's page says 4,096)
        "claude-opus-4-7": 2048,
        "claude-opus-4-8": 1024,
        "claude-opus-5": 512,
        "claude-sonnet-5": 1024,
        "claude-opus-4-6": 4096,
        "claude-haiku-4-5": 4096,
        "claude-sonnet-4-5": 1024,
        "claude-3-5-haiku-20241022": 2048,
    }
    for model_id, minimum in expected.items():
        rules = table.rules(model_id)
        assert (rules.min_tokens, rules.ttls_s, rules.family) == (minimum, (300.0, 3600.0), "claude"), model_id
    assert table.rules("anthropic.claude-opus-4-7").min_tokens == 4096  # Bedrock

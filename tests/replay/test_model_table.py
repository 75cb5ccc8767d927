"""Models: Anthropic API ids beside Bedrock ids, the updated minimums, user overrides (``--min-tokens``,
``--models FILE``), and a session that mixes models priced call by call."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from promptcache._cli import main
from promptcache._pricing import base_model_id, price_for
from promptcache.cache_points import get_model_info
from promptcache.cache_points._model_info import canonical_model_id
from promptcache.replay._engine import run_replay
from promptcache.replay._model_table import ModelTable, load_overrides


@pytest.mark.parametrize(
    ("model_id", "canonical"),
    [
        ("claude-opus-4-6", "anthropic.claude-opus-4-6"),
        ("claude-haiku-4-5-20251001", "anthropic.claude-haiku-4-5-20251001"),
        ("claude-haiku-4-5", "anthropic.claude-haiku-4-5-20251001"),
        ("claude-sonnet-4-5", "anthropic.claude-sonnet-4-5-20250929"),
        ("us.anthropic.claude-sonnet-4-20250514-v1:0", "anthropic.claude-sonnet-4-20250514-v1:0"),
    ],
)
def test_anthropic_api_ids_resolve_to_the_bedrock_entry(model_id: str, canonical: str) -> None:
    assert canonical_model_id(model_id) == canonical


def test_minimums_follow_the_current_prompt_caching_page() -> None:
    # AWS Bedrock user guide, prompt-caching.html (Supported models, regions, and limits), as read in 2026
    expected = {
        "claude-sonnet-4-5-20250929": (1024, ("5m", "1h")),
        "anthropic.claude-sonnet-4-6": (1024, ("5m", "1h")),  # was 2,048 in the old table
        "claude-opus-4-6": (4096, ("5m", "1h")),
        "claude-opus-4-5-20251101": (4096, ("5m", "1h")),
        "claude-haiku-4-5-20251001": (4096, ("5m", "1h")),
        "anthropic.claude-opus-5": (512, ("5m", "1h")),
        "anthropic.claude-sonnet-4-20250514-v1:0": (1024, ("5m",)),
    }
    for model_id, (minimum, ttls) in expected.items():
        info = get_model_info(model_id)
        assert (info.min_tokens_per_cache_point, info.allowed_ttls) == (minimum, ttls), model_id


def test_anthropic_api_ids_are_priced_from_the_anthropic_table() -> None:
    # Claude Code and the Anthropic SDK are Anthropic API traffic: the Anthropic price table, not Bedrock's
    assert base_model_id("claude-opus-4-6") == "anthropic.claude-opus-4-6"  # the cache rules' lookup key
    opus = price_for("claude-opus-4-6")
    assert (opus.input, opus.read, opus.write_5m, opus.write_1h, opus.provider) == (5.0, 0.5, 6.25, 10.0, "anthropic")
    assert opus.source == "https://platform.claude.com/docs/en/about-claude/pricing" and opus.as_of == "2026-12-01"
    assert price_for("claude-haiku-4-5") == price_for("claude-haiku-4-5-20251001")
    # the same model on Bedrock in-Region costs 10 % more than on the Anthropic API
    bedrock = price_for("anthropic.claude-haiku-4-5-20251001-v1:0")
    assert (bedrock.provider, bedrock.input, bedrock.write_1h) == ("bedrock", 1.1, 2.2)


def test_overrides_replace_an_entry_without_a_release(tmp_path: Path) -> None:
    table = ModelTable({"claude-opus-4-6": {"min_tokens": 2048, "ttls": ["5m"], "input": 4.0}}, None)
    rules, price = table.rules("claude-opus-4-6"), table.price("claude-opus-4-6")
    assert (rules.min_tokens, rules.ttls_s) == (2048, (300.0,))
    assert (price.input, price.read) == (4.0, 0.5)  # only what the entry names changes
    assert ModelTable(min_tokens=100).rules("amazon.nova-pro-v1:0").min_tokens == 100
    # a model in no table, priced by its override
    table = ModelTable({"acme.model-x": {"input": 1, "output": 2, "cache_write_5m": 1.25, "cache_read": 0.1}})
    assert table.price("acme.model-x").write_1h is None
    with pytest.raises(KeyError, match="acme.model-y"):
        ModelTable().price("acme.model-y")


def test_override_files_json_and_toml(tmp_path: Path) -> None:
    toml = tmp_path / "models.toml"
    toml.write_text('["claude-opus-4-6"]\nmin_tokens = 1024\nttls = ["5m", "1h"]\n')
    assert load_overrides(toml) == {"claude-opus-4-6": {"min_tokens": 1024, "ttls": ["5m", "1h"]}}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"claude-opus-4-6": {"min_token": 1}}))
    with pytest.raises(ValueError, match=r"bad.json: claude-opus-4-6: unknown field\(s\) \['min_token'\]"):
        load_overrides(bad)
    bad.write_text(json.dumps({"claude-opus-4-6": {"ttls": ["2h"]}}))
    with pytest.raises(ValueError, match="ttls must be a non-empty list"):
        load_overrides(bad)


def _two_model_session(path: Path) -> Path:
    """Two conversations without model names, 2,000 and 3,000 characters of user text."""
    convs = [
        {"id": "a", "messages": [{"role": "user", "content": "word " * 400}, {"role": "assistant", "content": "ok"}]},
        {"id": "b", "messages": [{"role": "user", "content": "word " * 600}, {"role": "assistant", "content": "ok"}]},
    ]
    path.write_text(json.dumps(convs))
    return path


def test_calls_without_a_logged_model_take_the_default_and_force_model_overrides(tmp_path: Path) -> None:
    path = _two_model_session(tmp_path / "two.json")
    default = run_replay([path], "anthropic.claude-sonnet-4-20250514-v1:0", ["none"], combined=False)
    tokens = default.input_tokens
    assert default.models == {"anthropic.claude-sonnet-4-20250514-v1:0": 2}
    assert default.strategies["none"].cost_usd == pytest.approx(tokens * 3e-6)
    forced = run_replay([path], "claude-haiku-4-5", ["none"], combined=False, force_model=True)
    assert forced.models == {"claude-haiku-4-5": 2}
    assert forced.strategies["none"].cost_usd == pytest.approx(tokens * 1e-6)


def test_cli_min_tokens_and_models_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _two_model_session(tmp_path / "two.json")
    out = str(tmp_path / "o")
    assert main(["replay", str(path), "--min-tokens", "64", "--out", out, "--no-chart"]) == 0
    report = json.loads((tmp_path / "o" / "replay.json").read_text())
    assert report["cache_rules"]["min_tokens_per_cache_point"] == 64
    models = tmp_path / "m.json"
    models.write_text(json.dumps({"anthropic.claude-sonnet-4-20250514-v1:0": {"min_tokens": 32}}))
    assert main(["replay", str(path), "--models", str(models), "--out", out, "--no-chart"]) == 0
    assert json.loads((tmp_path / "o" / "replay.json").read_text())["cache_rules"]["min_tokens_per_cache_point"] == 32
    capsys.readouterr()
    assert main(["replay", str(path), "--min-tokens", "-1", "--out", out]) == 2
    assert capsys.readouterr().err == "promptcache: error: --min-tokens must be an integer >= 0, got -1\n"
    models.write_text("{")
    assert main(["replay", str(path), "--models", str(models), "--out", out]) == 2
    assert capsys.readouterr().err.startswith(f"promptcache: error: --models: {models}: not a valid model file")

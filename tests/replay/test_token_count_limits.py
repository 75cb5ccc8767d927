"""A count that is not a token count is named with the real limit (below 2**32, ``MOST_TOKENS``) and its value
as written (a number past 64 bits shown by its digits); an OTLP ``intValue`` is a decimal string of ASCII digits
with an optional sign (the protobuf JSON mapping), so a padded or full-width one is a bad count, the span read
without its usage, not read as the number it looks like."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from promptcache.replay._bad_record import _short
from promptcache.replay._readers import read_file
from promptcache.replay._skipped import SkippedLines, skipping
from promptcache.replay._transcript import Conversation, TranscriptError, Usage
from promptcache.replay._usage_checks import MOST_TOKENS

PROXY = Path(__file__).resolve().parents[1] / "data" / "call_logs" / "openai_proxy.jsonl"
MODEL = {"stringValue": "anthropic.claude-sonnet-4-5-20250929-v1:0"}
LIMIT = "a token count (an integer from 0 to 4,294,967,295)"


def _otlp(tmp_path: Path, input_tokens: dict[str, Any]) -> Path:
    attrs = {"gen_ai.request.model": MODEL, "gen_ai.usage.input_tokens": input_tokens,
             "gen_ai.usage.output_tokens": {"intValue": "5"}}  # fmt: skip
    span = {"traceId": "t1", "spanId": "s1", "startTimeUnixNano": "1772445601000000000",
            "attributes": [{"key": k, "value": v} for k, v in attrs.items()]}  # fmt: skip
    path = tmp_path / "otel.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}))
    return path


def _usages(conversations: list[Conversation]) -> list[Usage | None]:
    return [c.messages[i].usage for c in conversations for i in c.request_ends()]


def test_the_limit_is_one_below_two_to_the_32() -> None:
    assert MOST_TOKENS - 1 == 4_294_967_295


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("99999999999999999999999", "99999999999999999999999"),  # past 64 bits: shown by its digits
        ("4294967296", "4294967296"),
        ("-12", "-12"),
        (" 12 ", "' 12 '"),  # int() would read these as 12; the protobuf JSON mapping does not
        ("\uff11\uff12", "'\uff11\uff12'"),
        ("12 ", "'12 '"),
        ("1_2", "'1_2'"),
        ("9" * 5000, "'" + "9" * 56 + "..."),  # beyond the digits Python converts: still a bad count
    ],
)
def test_an_otlp_int_value_not_a_count_names_the_limit_and_value(written: str, shown: str, tmp_path: Path) -> None:
    path = _otlp(tmp_path, {"intValue": written})
    with skipping(SkippedLines()) as tally:
        conversations = read_file(path)
    assert _usages(conversations) == [None]
    assert tally.bad_usage_reason == f"gen_ai.usage.input_tokens must be {LIMIT}, got {shown}"


@pytest.mark.parametrize("written", ["12", "+12", "0012"])
def test_an_otlp_decimal_int_value_is_the_count(written: str, tmp_path: Path) -> None:
    with skipping(SkippedLines()) as tally:
        conversations = read_file(_otlp(tmp_path, {"intValue": written}))
    (usage,) = _usages(conversations)
    assert (usage is not None and usage.input_tokens, usage is not None and usage.output_tokens) == (12, 5)
    assert tally.bad_usage == 0


def test_an_openai_count_past_the_limit_names_it(tmp_path: Path) -> None:
    record = json.loads(PROXY.read_text().splitlines()[0])
    record["response"]["usage"]["prompt_tokens"] = 10**30  # JSON parsers read it as a float
    path = tmp_path / "proxy.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(TranscriptError) as err:  # outside a skipping block (as under --strict): an error
        read_file(path)
    assert str(err.value) == f"{path}:1: response.usage.prompt_tokens must be {LIMIT}, got 1e+30"


def test_a_number_past_64_bits_is_shown_by_its_digits() -> None:
    assert (_short(10**30), _short({"n": -(10**22)}), _short(10**5000)) == (
        "1000000000000000000000000000000",
        '{"n":-10000000000000000000000}',
        "a number too large to show",
    )

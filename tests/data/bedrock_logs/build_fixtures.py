"""Rebuild the Bedrock invocation-log fixtures: record layout as AWS documents it, usage from the documented rules.

Run from the project root: ``python tests/data/bedrock_logs/build_fixtures.py`` (rewrites ``converse.jsonl`` and
``invoke_anthropic.json`` in place; running it twice gives the same files).

Record layout: the model invocation log record of the Bedrock user guide ("Monitor model invocation using
CloudWatch Logs and Amazon S3": ``schemaType``, ``schemaVersion``, ``timestamp``, ``accountId``, ``identity.arn``,
``region``, ``requestId``, ``operation``, ``modelId``, ``input`` with ``inputBodyJson``, ``inputTokenCount``,
``cacheReadInputTokenCount``, ``cacheWriteInputTokenCount``, ``output`` with ``outputBodyJson``,
``outputTokenCount``). Bodies: the Converse API request / response shapes (``cachePoint`` blocks with ``ttl``,
``usage`` with ``cacheDetails`` per TTL, ConverseStream events) and Anthropic Messages bodies (``cache_control``
with ``ttl``, stream events).

Sizes and usage: every block's size is what the replay's own estimate gives it (``TokenCounter(CLAUDE)``), with
tool schemas counted 1.2x (a tokenizer that splits JSON more finely than prose, so that the fixture's true sizes
are not simply the replay's estimate). The usage each record logs follows the documented prompt-caching rules
(Bedrock user guide, "Prompt caching for faster model inference"; Anthropic "Prompt caching"): a cache point
caches its prefix only when that prefix has the model's minimum (Sonnet 4.5: 1,024; Haiku 4.5: 4,096); a request
reads the longest live prefix ending at one of its points or at a block boundary up to 20 blocks before one; what follows, up to the last qualifying point, is
written, each segment at the TTL of the point that ends it (1-hour points before 5-minute ones); the rest is plain
input. The tool schemas and system prompts are long enough for the points the callers placed to qualify.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from promptcache.replay._tokens import CLAUDE, TokenCounter
from promptcache.replay._transcript import Block

HERE = Path(__file__).resolve().parent
MINIMUM = {"sonnet": 1_024, "haiku": 4_096}
TOOL_FACTOR = 1.2

_ORDER_POLICY = (
    "Orders are looked up by their numeric id. A shipped order has a carrier and a tracking number; a packed order "
    "is waiting for pickup at the warehouse; a cancelled order cannot be reopened, only placed again. When a "
    "customer asks about delivery dates, quote the carrier's estimate and say it is an estimate. Refunds for "
    "cancelled orders reach the original payment method within five business days. "
)
SYSTEM_ORDERS = "You are the order desk assistant. " + _ORDER_POLICY * 9
TOOL_ORDERS = (
    "Look up an order. Returns the order's status (placed, packed, shipped, delivered, cancelled), its carrier "
    "and tracking number once shipped, the delivery estimate, the items with quantities and prices, the billing "
    "and shipping addresses, and the history of status changes with their timestamps. "
) * 16
_BILLING_POLICY = (
    "Invoices are numbered per customer. Each invoice lists its lines with quantities, unit prices, discounts and "
    "taxes per line, the total in the customer's currency, the due date and the payment status. Credit notes "
    "reverse part or all of an invoice and carry their own number; never edit an issued invoice. "
)
SYSTEM_BILLING = "You answer billing questions. " + _BILLING_POLICY * 10
TOOL_BILLING = (
    "Fetch an invoice by number: its lines, totals, taxes, currency, due date, payment status, the credit notes "
    "that reverse it and the payments received against it, each with its date and method. "
) * 72


def _size(counter: TokenCounter, block: Any) -> int:
    """Tokens of one request element: a tool schema (1.2x), a text / tool call / tool result block."""
    if isinstance(block, dict):
        return round(counter.tool_schema(block) * TOOL_FACTOR)
    return counter.block(block)


def _converse_elements(body: dict[str, Any]) -> list[tuple[Any, str | None]]:
    """(element, ttl of a cache point right after it or None-for-no-point) in prompt order: tools, system,
    messages. A point is marked with the ttl string, or "5m" for a point without one; no point: ``None``."""
    out: list[tuple[Any, str | None]] = []

    def add(items: list[dict[str, Any]], convert: Any) -> None:
        for item in items:
            if "cachePoint" in item:
                prev, _ = out[-1]
                out[-1] = (prev, item["cachePoint"].get("ttl") or "5m")
            else:
                out.append((convert(item), None))

    add(body.get("toolConfig", {}).get("tools", []), lambda t: t["toolSpec"])
    add(body.get("system", []), lambda s: Block("text", s["text"]))
    for msg in body["messages"]:
        add(msg["content"], _converse_block)
    return out


def _converse_block(item: dict[str, Any]) -> Block:
    if "text" in item:
        return Block("text", item["text"])
    if "toolUse" in item:
        use = item["toolUse"]
        return Block("tool_use", json.dumps(use["input"], separators=(",", ":")), use["name"], use["toolUseId"])
    result = item["toolResult"]
    return Block("tool_result", json.dumps(result["content"][0]["json"], separators=(",", ":")))


def _anthropic_elements(body: dict[str, Any]) -> list[tuple[Any, str | None]]:
    out: list[tuple[Any, str | None]] = []
    for tool in body.get("tools", []):
        schema = {k: v for k, v in tool.items() if k != "cache_control"}
        out.append((schema, (tool.get("cache_control") or {}).get("ttl", "5m") if "cache_control" in tool else None))
    for block in body.get("system", []):
        out.append((Block("text", block["text"]), _ttl(block)))
    for msg in body["messages"]:
        for block in msg["content"]:
            if block["type"] == "text":
                item = Block("text", block["text"])
            elif block["type"] == "tool_use":
                item = Block("tool_use", json.dumps(block["input"], separators=(",", ":")), block["name"], block["id"])
            else:
                item = Block("tool_result", block["content"])
            out.append((item, _ttl(block)))
    return out


def _ttl(block: dict[str, Any]) -> str | None:
    control = block.get("cache_control")
    return None if control is None else control.get("ttl", "5m")


class _Cache:
    """The documented rules (module docstring) over prefixes named by their elements."""

    def __init__(self) -> None:
        self.entries: dict[str, float] = {}  # prefix key -> expires at

    def bill(
        self, elements: list[tuple[Any, str | None]], sizes: list[int], minimum: int, now: float
    ) -> dict[str, int]:
        keys, cum = [], [0]
        for (element, _), n in zip(elements, sizes):
            keys.append((keys[-1] if keys else "") + "|" + json.dumps(element, default=repr, sort_keys=True))
            cum.append(cum[-1] + n)
        points = [(i + 1, ttl) for i, (_, ttl) in enumerate(elements) if ttl is not None]
        alive = [k for k in range(1, len(keys) + 1) if self.entries.get(keys[k - 1], 0.0) > now]
        # the longest live prefix ending at a point or up to 20 blocks before one (Anthropic "Prompt caching")
        read_at = max((k for k in alive if any(b - 20 <= k <= b for b, _ in points)), default=0)
        written = {"5m": 0, "1h": 0}
        covered = cum[read_at]
        for b, ttl in points:
            if cum[b] < minimum:
                continue
            life = 3600.0 if ttl == "1h" else 300.0
            if b > read_at:
                written[ttl] += cum[b] - covered
                covered = cum[b]
            self.entries[keys[b - 1]] = now + life
        read = cum[read_at]
        return {"read": read, "5m": written["5m"], "1h": written["1h"], "input": cum[-1] - read - sum(written.values())}


def _seconds(stamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _converse_usage(billed: dict[str, int], output: int) -> dict[str, Any]:
    usage: dict[str, Any] = {"inputTokens": billed["input"], "outputTokens": output}
    write = billed["5m"] + billed["1h"]
    usage["totalTokens"] = billed["input"] + billed["read"] + write + output
    if billed["read"]:
        usage["cacheReadInputTokens"] = billed["read"]
    if write:
        usage["cacheWriteInputTokens"] = write
        usage["cacheDetails"] = [{"ttl": t, "inputTokens": billed[t]} for t in ("1h", "5m") if billed[t]]
    return usage


def _record_counts(record: dict[str, Any], billed: dict[str, int], output: int) -> None:
    record["input"]["inputTokenCount"] = billed["input"]
    record["input"]["cacheReadInputTokenCount"] = billed["read"]
    record["input"]["cacheWriteInputTokenCount"] = billed["5m"] + billed["1h"]
    record["output"]["outputTokenCount"] = output


def _rewrite_converse_body(body: dict[str, Any]) -> None:
    if "system" in body:
        body["system"][0]["text"] = SYSTEM_ORDERS
    for tool in body.get("toolConfig", {}).get("tools", []):
        if "toolSpec" in tool:
            tool["toolSpec"]["description"] = TOOL_ORDERS


def build_converse(counter: TokenCounter) -> None:
    path = HERE / "converse.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    cache = _Cache()
    for record in records:
        body = record["input"].get("inputBodyJson") or {}
        if "anthropic" not in record["modelId"]:
            continue
        _rewrite_converse_body(body)
        out = record.get("output")
        if not out:
            continue
        elements = _converse_elements(body)
        billed = cache.bill(elements, [_size(counter, e) for e, _ in elements], MINIMUM["sonnet"],
                            _seconds(record["timestamp"]))  # fmt: skip
        reply = out["outputBodyJson"]
        if isinstance(reply, list):  # ConverseStream: usage in the metadata event
            meta = next(e["metadata"] for e in reply if "metadata" in e)
            output = meta["usage"]["outputTokens"]
            meta["usage"] = _converse_usage(billed, output)
        else:
            output = reply["usage"]["outputTokens"]
            reply["usage"] = _converse_usage(billed, output)
        _record_counts(record, billed, output)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def build_invoke(counter: TokenCounter) -> None:
    path = HERE / "invoke_anthropic.json"
    records = json.loads(path.read_text())
    cache = _Cache()
    for record in records:
        body = record["input"]["inputBodyJson"]
        body["system"][0]["text"] = SYSTEM_BILLING
        body["system"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
        body["tools"][0]["description"] = TOOL_BILLING
        body["tools"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}  # 1-hour points come first
        elements = _anthropic_elements(body)
        billed = cache.bill(elements, [_size(counter, e) for e, _ in elements], MINIMUM["haiku"],
                            _seconds(record["timestamp"]))  # fmt: skip
        usage = {
            "input_tokens": billed["input"],
            "cache_creation_input_tokens": billed["5m"] + billed["1h"],
            "cache_read_input_tokens": billed["read"],
            "cache_creation": {"ephemeral_5m_input_tokens": billed["5m"], "ephemeral_1h_input_tokens": billed["1h"]},
        }
        reply = record["output"]["outputBodyJson"]
        if isinstance(reply, list):  # stream: usage in message_start, output tokens in message_delta
            start = next(e for e in reply if e["type"] == "message_start")
            output = next(e for e in reply if e["type"] == "message_delta")["usage"]["output_tokens"]
            start["message"]["usage"] = {**usage, "output_tokens": 1}
        else:
            output = reply["usage"]["output_tokens"]
            reply["usage"] = {**usage, "output_tokens": output}
        _record_counts(record, billed, output)
    path.write_text(json.dumps(records, indent=1) + "\n")


if __name__ == "__main__":
    counter = TokenCounter(CLAUDE)
    build_converse(counter)
    build_invoke(counter)

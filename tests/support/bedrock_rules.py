"""Bedrock request checks the Stubber does not make (cache-point rules), and stub helpers."""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel, Field

from promptcache.cache_points._strategy import is_cache_point


def all_points(params: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every cachePoint of a request in Bedrock's prefix order: tools, system, messages."""
    out = [("tools", b) for b in (params.get("toolConfig") or {}).get("tools") or [] if is_cache_point(b)]
    out += [("system", b) for b in params.get("system") or [] if is_cache_point(b)]
    for i, message in enumerate(params["messages"]):
        out += [(f"messages[{i}]", b) for b in message["content"] if is_cache_point(b)]
    return out


def violations(params: dict[str, Any], nova: bool = False) -> list[str]:
    """The Bedrock cache-point rules the Stubber does not check (each one a ValidationException)."""
    problems = []
    if nova and any(where == "tools" for where, _ in all_points(params)):
        problems.append("Nova: a point in tools")
    for i, message in enumerate(params["messages"]):
        content = message["content"]
        for j, block in enumerate(content):
            if not is_cache_point(block):
                continue
            before = content[j - 1] if j else None
            if before is None:
                problems.append(f"messages[{i}]: point is the first block")
            elif "reasoningContent" in before:
                problems.append(f"messages[{i}]: point right after a reasoning block")
            elif nova and ("toolResult" in before or "image" in before):
                problems.append(f"messages[{i}]: Nova point right after {next(iter(before))}")
    points = all_points(params)
    if len(points) > 4:
        problems.append(f"{len(points)} cache points (max 4)")
    cap = 1
    for where, block in points:
        rank = {"5m": 0, "1h": 1}[block["cachePoint"].get("ttl", "5m")]
        if rank > cap:
            problems.append(f"TTL increases at {where}")
        cap = min(cap, rank)
    return problems


def strip_points(params: dict[str, Any]) -> dict[str, Any]:
    params = copy.deepcopy(params)
    params["system"] = [b for b in params.get("system") or [] if not is_cache_point(b)]
    for message in params["messages"]:
        message["content"] = [b for b in message["content"] if not is_cache_point(b)]
    if "toolConfig" in params:
        params["toolConfig"]["tools"] = [t for t in params["toolConfig"]["tools"] if not is_cache_point(t)]
    return params


def joined(chunks: list[Any]) -> Any:
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


class Weather(BaseModel):
    """Weather report for one city, with the temperature in whole degrees Celsius."""

    city: str = Field(description="the name of the city the report is for " * 5)
    temp: int


# -- every rule of the placement table, checked on a request as sent (written apart from the code under test) ----
def _lists(params: dict[str, Any]) -> list[tuple[str, list[Any]]]:
    """Every list a point can sit in, in prefix order, with the name of its entries."""
    out = [("tools", list((params.get("toolConfig") or {}).get("tools") or [])), ("system", params.get("system") or [])]
    out += [(f"messages[{i}].content", m["content"]) for i, m in enumerate(params["messages"])]
    return out


def _after(kind):
    """A rule check: no point directly after a block for which ``kind(block)`` holds."""

    def check(params: dict[str, Any], info: Any) -> list[str]:
        return [
            f"{name}[{j}]"
            for name, blocks in _lists(params)
            for j, block in enumerate(blocks)
            if is_cache_point(block) and j and not is_cache_point(blocks[j - 1]) and kind(blocks[j - 1])
        ]

    return check


def _ttl(block: dict[str, Any]) -> Any:
    return block["cachePoint"].get("ttl", "5m")


def _ttl_order(params: dict[str, Any], info: Any) -> list[str]:
    problems, cap = [], 1
    for where, block in all_points(params):
        rank = {"5m": 0, "1h": 1}.get(_ttl(block), 0)
        if rank > cap:
            problems.append(where)
        cap = min(cap, rank)
    return problems


#: rule name -> (families it applies to, check(params, model_info) -> positions breaking it)
RULE_CHECKS: dict[str, tuple[frozenset[str], Any]] = {
    "uncached-model": (
        frozenset({"claude", "nova", "other"}),
        lambda p, info: [w for w, _ in all_points(p)] if not info.supports_prompt_cache else [],
    ),
    "max-points": (
        frozenset({"claude", "nova", "other"}),
        lambda p, info: ["request"] if len(all_points(p)) > min(4, info.max_cache_points or 4) else [],
    ),
    "ttl-value": (
        frozenset({"claude", "nova", "other"}),
        lambda p, info: [
            w for w, b in all_points(p) if _ttl(b) not in ("5m", "1h") or _ttl(b) not in info.allowed_ttls
        ],
    ),
    "ttl-order": (frozenset({"claude", "nova", "other"}), _ttl_order),
    "uncachable-field": (
        frozenset({"claude", "nova", "other"}),
        lambda p, info: [w for w, _ in all_points(p) if w == "tools" and "tools" not in info.cachable_fields],
    ),
    "first-block": (
        frozenset({"claude", "nova", "other"}),
        lambda p, info: [f"{name}[0]" for name, blocks in _lists(p) if blocks and is_cache_point(blocks[0])],
    ),
    "consecutive": (
        frozenset({"claude", "nova", "other"}),
        lambda p, info: [
            f"{name}[{j}]"
            for name, blocks in _lists(p)
            for j in range(1, len(blocks))
            if is_cache_point(blocks[j]) and is_cache_point(blocks[j - 1])
        ],
    ),
    "after-reasoning": (frozenset({"claude", "nova", "other"}), _after(lambda b: "reasoningContent" in b)),
    "after-non-pdf-document": (
        frozenset({"claude"}),
        _after(lambda b: "document" in b and str(b["document"].get("format")).lower() != "pdf"),
    ),
    "after-tool-result": (frozenset({"nova"}), _after(lambda b: "toolResult" in b)),
    "after-image": (frozenset({"nova"}), _after(lambda b: "image" in b)),
}


def family(info: Any) -> str:
    return {"anthropic": "claude", "amazon": "nova"}.get(info.provider, "other")


def rule_violations(params: dict[str, Any], info: Any) -> list[str]:
    """``"<rule>: <position>"`` for every rule of ``RULE_CHECKS`` that applies to ``info``'s family and that the
    request (as sent) breaks."""
    fam = family(info)
    return [
        f"{name}: {where}"
        for name, (families, check) in RULE_CHECKS.items()
        if fam in families
        for where in check(params, info)
    ]

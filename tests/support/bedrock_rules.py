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

"""How well does the token estimate match what Claude billed? Fits and checks ``promptcache.replay._tokens.CLAUDE``.

Run by hand from the project root (figures go to bench/README.md, section "Replay: token estimate"):

    python bench/token_estimate.py [SESSION.jsonl ...]   # default: the Claude Code sessions in the shared data

For every pair of consecutive logged calls of a conversation, the growth of the logged prompt size (input + cache
read + cache write) is what the messages added between them cost. Counting those messages with plain
``cl100k_base`` per block kind (text and reasoning, tool-call name + arguments, tool-result text) and the number of
tool_use/tool_result blocks gives one linear equation per pair; least squares (no intercept) gives one multiplier per
kind and a per-block overhead. The fit is made on each session alone and checked on the other one (so a constant
that only fits one file shows), then on all together.

It then strips the usage fields and compares the calibrated estimate of every request's prompt with the logged
size, in total, through the replay's own path (``prepare`` on the stripped conversations: the unlogged prefix is
``promptcache.replay._sizes.CLAUDE_CODE_CONTEXT_TOKENS``), for the session file and for the session folder (with
its sub-agents), plain ``cl100k_base`` and calibrated.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import numpy as np
from shared_data import find_data_file

from promptcache.replay._prepare import prepare, requests_of
from promptcache.replay._readers import read_conversations
from promptcache.replay._tokens import CLAUDE, RAW, Calibration, TokenCounter
from promptcache.replay._transcript import Conversation, Message

_SESSIONS = ("258c7280-ae70-4798-800f-63464d01a85d.jsonl", "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl")


def _rows(convs: list[Conversation], counter: TokenCounter) -> tuple[np.ndarray, np.ndarray]:
    """Per consecutive logged call pair: [text, tool args, tool results, tool blocks] counts and the growth."""
    xs, ys = [], []
    for conv in convs:
        ends = [c for c in conv.request_ends() if conv.messages[c].usage is not None]
        for a, b in zip(ends, ends[1:]):
            grow = conv.messages[b].usage.prompt_tokens - conv.messages[a].usage.prompt_tokens  # type: ignore[union-attr]
            x = [0.0, 0.0, 0.0, 0.0]
            for m in conv.messages[a:b]:
                for blk in m.blocks:
                    if blk.kind == "tool_use":
                        x[1] += counter.text(blk.text) + counter.text(blk.name)
                        x[3] += 1
                    elif blk.kind == "tool_result":
                        x[2] += counter.text(blk.text)
                        x[3] += 1
                    elif blk.kind != "image":
                        x[0] += counter.text(blk.text)
            if grow >= 0:  # a shrinking prompt (dropped content) says nothing about sizes
                xs.append(x)
                ys.append(grow)
    return np.array(xs), np.array(ys, dtype=float)


def _three(x: np.ndarray) -> np.ndarray:
    """The shipped model's columns: text + tool args (one multiplier), tool results, tool blocks."""
    return np.c_[x[:, 0] + x[:, 1], x[:, 2], x[:, 3]]


def _fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    coef, *_ = np.linalg.lstsq(_three(x), y, rcond=None)
    return coef


def total_error(convs: list[Conversation], calibration: Calibration) -> tuple[int, int]:
    """(estimated, logged) prompt tokens summed over every logged request, usage stripped for the estimate."""
    counter = TokenCounter(calibration)
    est = logged = 0
    for conv in convs:
        stripped = dataclasses.replace(
            conv, messages=[Message(m.role, m.blocks, m.timestamp, None, m.model) for m in conv.messages]
        )
        prepared = prepare(stripped, counter)
        for req in requests_of(prepared, counter):
            usage = conv.messages[req.cut].usage
            if usage is not None:
                est += req.input_tokens
                logged += usage.prompt_tokens
    return est, logged


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sessions", nargs="*")
    args = parser.parse_args()
    paths = [Path(p) for p in args.sessions] or [find_data_file(f"claude_code/{n}") for n in _SESSIONS]
    raw = TokenCounter(RAW)
    data = {p.name: read_conversations([p]) for p in paths}
    rows = {name: _rows(convs, raw) for name, convs in data.items()}
    print("fit per session (text and tool args, tool results, tokens per tool block) and its error on the others:")
    for name, (x, y) in rows.items():
        coef = _fit(x, y)
        others = [rows[o] for o in rows if o != name]
        line = f"  {name[:8]}: " + ", ".join(f"{c:.3f}" for c in coef) + f"  ({len(y)} call pairs)"
        for xo, yo in others:
            line += f"; on the other: growth {float((_three(xo) @ coef).sum() / yo.sum() - 1):+.1%}"
        print(line)
    x = np.vstack([r[0] for r in rows.values()])
    y = np.concatenate([r[1] for r in rows.values()])
    coef = _fit(x, y)
    print("  all: " + ", ".join(f"{c:.3f}" for c in coef) + f"  ({len(y)} call pairs)")
    shipped = np.array([CLAUDE.tool_args, CLAUDE.tool_result, CLAUDE.tool_block_overhead])
    print(f"  shipped CLAUDE: growth error {float((_three(x) @ shipped).sum() / y.sum() - 1):+.1%} on all pairs")
    print("prompt size with usage stripped, total over logged requests (estimate / logged - 1):")
    for path in paths:
        for label, convs in (("file", data[path.name]), ("folder", read_conversations([path.with_suffix("")]))):
            if label == "folder" and not path.with_suffix("").is_dir():
                continue
            line = f"  {path.name[:8]} {label:6s}"
            for cal in (RAW, CLAUDE):
                est, logged = total_error(convs, cal)
                line += f"  {cal.name}: {est / logged - 1:+.1%}"
            print(line + f"  ({logged:,} logged prompt tokens)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

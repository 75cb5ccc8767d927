"""How well does the token estimate match what Claude billed? Fits and checks ``promptcache.replay._tokens.CLAUDE``.

Run by hand from the project root (figures go to bench/README.md, section "Replay: token estimate"):

    python bench/token_estimate.py [SESSION.jsonl ...]   # default: the six readable shared sessions with usage

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

#: The shared Claude Code sessions that log usage and read without broken lines.
_SESSIONS = (
    "claude_code/258c7280-ae70-4798-800f-63464d01a85d.jsonl",
    "claude_code/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl",
    "claude_code_ext/m-claude/43391f62-680a-4688-9dd8-3637467d6b23.jsonl",
    "claude_code_ext/m-claude/abc757d1-3da3-42fb-bb7b-ffa293a4ba29.jsonl",
    "claude_code_ext/m-claude/ff59cfd2-09dc-4a18-8c9f-0d46c3d4e8cd.jsonl",
    "claude_code_ext/session-share/0ccf1a04-1b4c-43b6-8aa5-79e41db43a68.jsonl",
)


def _family(model: str | None) -> str:
    """``claude-opus-4-6`` / ``claude-haiku-4-5-20251001`` -> ``opus-4-6`` / ``haiku-4-5``."""
    stem = (model or "?").removeprefix("claude-")
    return stem.rsplit("-", 1)[0] if stem[-8:].isdigit() else stem


def _rows(
    convs: list[Conversation], counter: TokenCounter, families: list[str] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per consecutive logged call pair: [text, tool args, tool results, tool blocks] counts and the growth (the
    later call's model family appended to ``families`` when given)."""
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
                if families is not None:
                    families.append(_family(conv.messages[b].model))
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
    paths = [Path(p) for p in args.sessions] or [find_data_file(n) for n in _SESSIONS]
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
    fams: list[str] = []
    fx, fy = _rows([c for convs in data.values() for c in convs], raw, fams)
    print("  shipped CLAUDE, growth error per model family (the later call's model):")
    for fam in sorted(set(fams)):
        pick = np.array([f == fam for f in fams])
        err = float((_three(fx[pick]) @ shipped).sum() / fy[pick].sum() - 1)
        print(f"    {fam}: {err:+.1%} ({int(pick.sum())} call pairs, {fy[pick].sum():,.0f} tokens of growth)")
    print("  per model family: logged growth / plain cl100k_base count of the text added, and the family's own fit:")
    for fam in sorted(set(fams)):
        pick = np.array([f == fam for f in fams])
        ratio = float(fy[pick].sum() / fx[pick][:, :3].sum())
        own = _fit(fx[pick], fy[pick])
        print(f"    {fam}: {ratio:.3f} ({int(pick.sum())} call pairs); fit " + ", ".join(f"{c:.3f}" for c in own))
    print("prompt size with usage stripped, total over logged requests (estimate / logged - 1):")
    for path in paths:
        folder = path.with_suffix("")
        kinds = [("file", data[path.name])]
        if folder.is_dir():
            kinds.append(("folder", read_conversations([folder])))
        for label, convs in kinds:
            line = f"  {path.name[:8]} {label:6s}"
            for cal in (RAW, CLAUDE):
                est, logged = total_error(convs, cal)
                line += f"  {cal.name}: {est / logged - 1:+.1%}"
            print(line + f"  ({logged:,} logged prompt tokens)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

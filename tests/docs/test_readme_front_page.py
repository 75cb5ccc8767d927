"""README.md is the front page: at most 12 KB, the two commands exactly as CI and a new user run them, an example
per plugin (run by tests/test_readme.py), and links into the docs that resolve."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"

INSTALL_AND_REPLAY = (
    'python3 -m venv .venv && .venv/bin/pip install -e ".[replay]" && .venv/bin/promptcache replay '
    "examples/data/sample_conversations.json --model anthropic.claude-sonnet-4-20250514-v1:0"
)
INSTALL_AND_TEST = 'python3 -m venv .venv && .venv/bin/pip install -e ".[test]" && .venv/bin/python -m pytest -q'


def test_readme_is_at_most_12_kb() -> None:
    assert len(README.read_bytes()) <= 12 * 1024


def test_readme_has_the_two_commands_as_bash_blocks() -> None:
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(), re.S)
    assert [b.strip() for b in blocks[:2]] == [INSTALL_AND_REPLAY, INSTALL_AND_TEST]


def test_readme_links_resolve_inside_the_project() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README.read_text())
    local = [link for link in links if "://" not in link]
    assert "docs/replay.md" in local and "docs/architecture.md" in local
    assert [link for link in local if not (ROOT / link).is_file()] == []


def test_every_plugin_has_a_readme_example_block() -> None:
    names = re.findall(r"```python\n# readme-example: ([\w-]+)\n", README.read_text())
    assert names == ["response-cache", "cache-points", "typed-memory", "intention-cache", "processors"]


def test_readme_replay_table_matches_a_fresh_replay() -> None:
    from promptcache.replay._engine import DEFAULT_STRATEGIES, run_replay

    result = run_replay(
        [str(ROOT / "examples" / "data" / "sample_conversations.json")],
        "anthropic.claude-sonnet-4-20250514-v1:0",
        DEFAULT_STRATEGIES,
        force_model=True,  # the README's command passes --model
    )
    section = README.read_text().split("## The replay table", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\*\*)?([a-z+-]+)(\*\*)? \| (.+) \|$", section, re.M)
    table = {name: [cell.strip() for cell in cells.split("|")] for _, name, _, cells in rows if name != "strategy"}
    assert list(table) == [
        "none",
        "last-message",
        "langchain-aws",
        "multi-point",
        "anchored-tail",
        "anchored-tail+response-cache",
    ]
    for name, cells in table.items():
        row = result.strategies[name]
        rel = result.relative(name)
        assert cells == [
            f"{row.input_tokens:,}",
            f"{row.read_tokens:,}",
            f"{row.write_tokens:,}",
            f"{row.cost_usd:,.4f}",
            f"{rel:.1%}",
            f"{row.read_share:.1%}",
        ], name
    assert f"{result.requests} requests, {result.input_tokens:,} input tokens" in " ".join(README.read_text().split())
    from promptcache.replay._decision import decide

    decision = decide(result)
    assert decision is not None and decision.strategy == "anchored-tail"
    assert f"> {decision.sentence}\n" in section  # the sentence the command opens with, word for word

"""As-logged against the logged bill, per shared Claude Code session (alone) and per account (one run).

Run by hand from the project root (the table goes to bench/README.md, section "Replay: as-logged per session"):

    python bench/replay_fidelity.py

For every session of the shared data (``claude_code/``, ``claude_code_ext/``; found by bench/shared_data.py), as its
log alone and as its session folder where it has one: calls, broken lines skipped, the logged input-side bill, the
simulated ``as-logged`` one and their difference; then each account's sessions replayed in one run.
"""

from __future__ import annotations

from pathlib import Path

from shared_data import find_data_file

from promptcache.replay._engine import run_replay

MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"
ACCOUNTS = {
    "claude_code": "spotter (handgemacht-ai)",
    "claude_code_ext/m-claude": "M-Claude",
    "claude_code_ext/session-share": "session-share",
}


def _row(label: str, paths: list[Path]) -> str:
    result = run_replay(paths, MODEL, ["none"], combined=False)
    fid = result.fidelity
    if fid is None or fid.cost_difference is None:
        return f"| {label} | {result.requests} | {result.skipped.count} | - | - | - |"
    return (
        f"| {label} | {fid.calls} | {result.skipped.count} | {fid.logged_usd:.4f} | {fid.simulated_usd:.4f} | "
        f"{fid.cost_difference:+.2%} |"
    )


def main() -> None:
    print("| session (replayed alone) | calls | broken lines skipped | logged USD | as-logged USD | difference |")
    print("|---|---|---|---|---|---|")
    accounts: list[tuple[str, Path]] = []
    for name, account in ACCOUNTS.items():
        folder = find_data_file(name, required=False)
        if folder is None:
            continue
        accounts.append((account, folder))
        for log in sorted(folder.glob("*.jsonl")):
            print(_row(f"{account} {log.stem[:8]}", [log]))
            if (folder / log.stem).is_dir():
                print(_row(f"{account} {log.stem[:8]} + sub-agents (folder)", [folder / log.stem]))
    print()
    print("| account (every session in one run) | calls | broken lines skipped | logged USD | as-logged USD | "
          "difference |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for account, folder in accounts:
        print(_row(account, [folder]))


if __name__ == "__main__":
    main()

"""The inputs of one replay, each read once: paths expanded to the logs they name, repeats merged.

- A **Claude Code project folder** (``~/.claude/projects/<project>/``: session logs ``<id>.jsonl``, each with its
  session folder ``<id>/`` when it ran sub-agents) stands for every session in it: each session folder (which
  reads the log beside it), then each log without a folder, by name. Other files in it (a ``LICENSE``, notes) are
  not logs and are left out.
- A **folder of project folders** (``~/.claude/projects/`` itself) stands for every session of every project
  folder in it, in one run. That folder is one account's (Claude Code keeps it per user, one project folder per
  working directory), and the provider's cache is the account's, not a project's: a prefix one session wrote is read
  by any other session that sends the same bytes within its TTL, so every project's sessions share one cache
  timeline (``promptcache.replay._stream``). Sub-folders that are not project folders are left out.
- The **same file given twice** (by any spelling: ``a.jsonl ./a.jsonl``, a symlink) is read once.
- A **session log and its folder** (``<id>.jsonl <id>/``, as ``dir/*`` gives them) are read once, through the
  folder (which holds the sub-agents too); so is a sub-agent log given beside its session folder.
- One **API call logged in several files** (a resumed session copies its history into a new log) is replayed
  once, by its request id (``Conversation.meta["request_ids"]``); ``promptcache.replay._stream`` applies it.

``MergedInput`` says what was merged, for the report (one line, and the JSON).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ._claude_code import file_is_claude_code_log, is_session_folder, session_files

__all__ = ["MergedInput", "expand_inputs", "is_project_folder", "is_projects_root", "project_folders"]


@dataclass
class MergedInput:
    """What a replay read once although it was given more than once.

    Attributes:
        repeated_files: inputs that name a file or folder already given (as given).
        covered_files: logs given beside the session folder that reads them (as given).
        project_folders: project folders expanded to their sessions (as given).
        merged_calls: API calls found in more than one log, replayed once (by request id).
    """

    repeated_files: list[str] = field(default_factory=list)
    covered_files: list[str] = field(default_factory=list)
    project_folders: list[str] = field(default_factory=list)
    merged_calls: int = 0

    def summary(self) -> str | None:
        """One line on what was counted once (``None``: nothing was)."""
        parts = []
        if self.repeated_files:
            parts.append(f"{_n(len(self.repeated_files), 'input')} given twice ({_names(self.repeated_files)})")
        if self.covered_files:
            parts.append(
                f"{_n(len(self.covered_files), 'log')} also read through its session folder "
                f"({_names(self.covered_files)})"
            )
        if self.merged_calls:
            parts.append(f"{_n(self.merged_calls, 'API call')} logged in more than one file")
        return "counted once: " + "; ".join(parts) if parts else None

    def to_json(self) -> dict[str, object]:
        return {
            "repeated_files": list(self.repeated_files),
            "covered_files": list(self.covered_files),
            "project_folders": list(self.project_folders),
            "merged_calls": self.merged_calls,
        }


def _names(names: list[str]) -> str:
    """The first name, and how many more (the summary stays one line)."""
    return names[0] + (f" and {len(names) - 1:,} more" if len(names) > 1 else "")


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _identity(path: Path) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return str(path)


def _is_dir(path: Path) -> bool:
    try:
        return bool(str(path)) and path.is_dir()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte: the readers report it
        return False


def is_project_folder(path: Path) -> bool:
    """A folder (not itself a session folder) holding at least one Claude Code session log or session folder."""
    return path.is_dir() and not is_session_folder(path) and bool(project_sessions(path))


def project_sessions(folder: Path) -> list[Path]:
    """The sessions of a project folder (module docstring): session folders, then logs without a folder."""
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    folders = [e for e in entries if e.is_dir() and is_session_folder(e)]
    covered = {_identity(f) for s in folders for f in session_files(s)}
    logs = [
        e
        for e in entries
        if e.suffix.lower() == ".jsonl" and e.is_file() and _identity(e) not in covered and file_is_claude_code_log(e)
    ]
    return [*folders, *logs]


def project_folders(path: Path) -> list[Path]:
    """The project folders directly in ``path`` (a folder of project folders, ``~/.claude/projects/``), by name;
    ``[]`` when ``path`` is itself a session or project folder, or holds none."""
    if not _is_dir(path) or is_session_folder(path) or is_project_folder(path):
        return []
    try:
        entries = sorted(path.iterdir())
    except OSError:
        return []
    return [e for e in entries if _is_dir(e) and is_project_folder(e)]


def is_projects_root(path: Path) -> bool:
    """A folder of Claude Code project folders (``~/.claude/projects/``): at least one sub-folder is one."""
    return bool(project_folders(path))


def expand_inputs(paths: Sequence[str | Path]) -> tuple[list[str | Path], MergedInput]:
    """The inputs to read, in the order given, each once (module docstring), and what was merged.

    Paths that do not exist or cannot be read are passed on unchanged: the readers report them.
    """
    merged = MergedInput()
    units: list[str | Path] = []
    for given in paths:
        path = Path(given)
        if _is_dir(path) and is_project_folder(path):
            merged.project_folders.append(str(given))
            units.extend(project_sessions(path))
        elif projects := project_folders(path):
            for project in projects:
                merged.project_folders.append(str(project))
                units.extend(project_sessions(project))
        else:
            units.append(given)
    folder_of: dict[str, tuple[str, str | Path]] = {}  # log identity -> (its session folder's identity, as given)
    for unit in units:
        path = Path(unit)
        if _is_dir(path) and is_session_folder(path):
            for f in session_files(path):
                folder_of.setdefault(_identity(f), (_identity(path), unit))
    out: list[str | Path] = []
    seen: set[str] = set()
    early: set[str] = set()  # session folders read at the place of a log they hold, mentioned before them
    for unit in units:
        key = _identity(Path(unit)) if str(unit) else ""
        if key in folder_of:
            merged.covered_files.append(str(unit))
            key, unit = folder_of[key]
            if key in seen:
                continue
            early.add(key)
        elif key and key in seen:
            if key in early:
                early.discard(key)
            else:
                merged.repeated_files.append(str(unit))
            continue
        seen.add(key)
        out.append(unit)
    return out, merged

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
- The **same file given twice** (by any spelling: ``a.jsonl ./a.jsonl``, a symlink, a hard link) is read once.
- A **session log and its folder** (``<id>.jsonl <id>/``, as ``dir/*`` gives them) are read once, through the
  folder (which holds the sub-agents too); so is a sub-agent log given beside its session folder.
- One **API call logged in several files** (a resumed session copies its history into a new log) is replayed
  once, by its request id (``Conversation.meta["request_ids"]``); ``promptcache.replay._stream`` applies it.

``MergedInput`` says what was merged, for the report (one line, and the JSON).
"""

from __future__ import annotations

import os
import stat
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ._claude_code import file_is_claude_code_log, is_session_folder, session_files
from ._input_guard import name_summary as _names
from ._input_guard import skipped_not_regular
from ._transcript import TranscriptWarning

__all__ = ["MergedInput", "expand_inputs", "is_project_folder", "is_projects_root", "project_folders"]


@dataclass
class MergedInput:
    """What a replay read once although it was given more than once.

    Attributes:
        repeated_files: inputs that name a file or folder already given (as given).
        covered_files: logs given beside the session folder that reads them (as given).
        project_folders: project folders expanded to their sessions (as given).
        merged_calls: API calls found again by request id (and model), replayed once: the first read is kept.
        within_file: of those, found again in the file that held the first.
        differing: of those, whose reply (blocks or usage) or the message it answers differs from the kept one's.
        first_differing: the request id of the first of those.
        not_logs: files left out for not being logs at all (several paths given; as given).
    """

    repeated_files: list[str] = field(default_factory=list)
    covered_files: list[str] = field(default_factory=list)
    project_folders: list[str] = field(default_factory=list)
    merged_calls: int = 0
    within_file: int = 0
    differing: int = 0
    first_differing: str = ""
    not_logs: list[str] = field(default_factory=list)

    def note_repeat(self, request_id: str, first: tuple[bytes, str], again: tuple[bytes, str]) -> None:
        """Count one API call read again (``merged_calls``): ``first`` / ``again`` are (reply digest, file) of the
        one kept and the one left out; the same file counts in ``within_file``, a different reply in
        ``differing`` (``first_differing``: its request id)."""
        self.merged_calls += 1
        self.within_file += first[1] == again[1]
        if first[0] != again[0]:
            self.differing += 1
            self.first_differing = self.first_differing or request_id

    def summary(self) -> str | None:
        """One line on what was counted once (``None``: nothing was)."""
        parts = []
        if self.repeated_files:
            parts.append(f"{_n(len(self.repeated_files), 'input')} given twice ({_names(self.repeated_files)})")
        if self.covered_files:
            parts.append(
                f"{_n(len(self.covered_files), 'log')} also read through "
                f"{'its session folder' if len(self.covered_files) == 1 else 'their session folders'} "
                f"({_names(self.covered_files)})"
            )
        if self.merged_calls:
            parts.append(self._calls_part())
        return "counted once: " + "; ".join(parts) if parts else None

    def _calls_part(self) -> str:
        count, within = self.merged_calls, self.within_file
        where = (
            "within one file" if within == count else "in more than one file" if not within
            else f"more than once ({within:,} within one file)"
        )  # fmt: skip
        if not self.differing:
            return f"{_n(count, 'API call')} logged {where} (the same call each time)"
        same = count - self.differing
        return (
            f"{_n(count, 'API call')} logged {where} by request id; {self.differing:,} with a different prompt or "
            f"reply (first: {self.first_differing}), {same:,} the same; the first read is kept"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "repeated_files": list(self.repeated_files),
            "covered_files": list(self.covered_files),
            "project_folders": list(self.project_folders),
            "merged_calls": self.merged_calls,
            "merged_within_file": self.within_file,
            "merged_differing": self.differing,
        }


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _identity(path: Path) -> str:
    """The file ``path`` names, as ``"DEV:INODE"`` (``os.stat``: a hard link, a symlink and any spelling of the same
    file agree); its real path when it cannot be stat'ed (the readers report it)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        try:
            return os.path.realpath(path)
        except (OSError, ValueError):
            return str(path)
    return f"{st.st_dev}:{st.st_ino}"


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _is_dir(path: Path) -> bool:
    try:
        return bool(str(path)) and path.is_dir()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte: the readers report it
        return False


def is_project_folder(path: Path) -> bool:
    """A folder (not itself a session folder) holding at least one Claude Code session log or session folder."""
    return path.is_dir() and not is_session_folder(path) and bool(project_sessions(path))


def project_sessions(folder: Path, warn: bool = False) -> list[Path]:
    """The sessions of a project folder (module docstring): session folders, then logs without a folder.

    Args:
        folder: the project folder.
        warn: say (one ``TranscriptWarning`` naming them) which ``*.jsonl`` entries were left out for not being
            regular files (a FIFO or a link to a device would block or never end).
    """
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return []
    folders = [e for e in entries if e.is_dir() and is_session_folder(e)]
    covered = {_identity(f) for s in folders for f in session_files(s)}
    named = [e for e in entries if e.suffix.lower() == ".jsonl" and not _is_dir(e)]
    odd = [e.name for e in named if not _is_regular(e)]
    if odd and warn:
        warnings.warn(skipped_not_regular(folder, odd), TranscriptWarning, stacklevel=2)
    logs = [e for e in named if _is_regular(e) and _identity(e) not in covered and file_is_claude_code_log(e)]
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
            units.extend(project_sessions(path, warn=True))
        elif projects := project_folders(path):
            for project in projects:
                merged.project_folders.append(str(project))
                units.extend(project_sessions(project, warn=True))
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

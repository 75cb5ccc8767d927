"""The ``promptcache`` command (also ``python -m promptcache``).

``promptcache --version``; ``promptcache replay FILE... [--model MODEL_ID] [--min-tokens N] [--models FILE]
[--tokens claude|cl100k] [--strategy NAME]... [--gap-s SECONDS] [--out DIR]
[--response-cache-ttl-s SECONDS] [--monthly-requests N] [--no-chart] [--strict]`` replays
recorded agent conversations through the prompt-cache simulator and prints what each cache-point strategy, the
ResponseCache and the intention cache would have saved; it writes ``replay.json`` and ``replay.png`` to ``DIR``.
Needs no services and no AWS account. The output files are written before the terminal report, and a reader of
the report that stops early (``| head``) ends the report, not the command. Exit codes: 0 success, 2 bad input (one line on stderr naming the file and
line, or the bad option value, or an ``--out`` that cannot be written). A JSONL line that is not valid JSON is
skipped (one warning for the run: how many, and the first FILE:LINE; ``--strict`` makes it exit 2 instead); inputs
given twice, a session log beside its folder, and API calls logged in several files are counted once (one warning
line says what was merged). A FILE may be a Claude Code project folder (every session in it). Records a reader skips (a record type it
has never seen) are reported as one ``promptcache: warning: FILE:LINE: ...`` line each, once per file and type.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib.util
import os
import sys
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from promptcache._cli_parser import DEFAULT_MODEL, build_parser
from promptcache._cli_parser import fail as _fail

if TYPE_CHECKING:
    from promptcache.replay._engine import ReplayResult

__all__ = ["main", "build_parser"]

PROGRESS_MIN_REQUESTS = 300


def _report_warnings(caught: list[warnings.WarningMessage]) -> None:
    """Print the readers' ``TranscriptWarning`` s as one stderr line each; re-issue any other warning unchanged."""
    from promptcache.replay._transcript import TranscriptWarning

    for w in caught:
        if issubclass(w.category, TranscriptWarning):
            print(f"promptcache: warning: {' '.join(str(w.message).split())}", file=sys.stderr)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno, w.file, w.line)


def _run_replay(args: argparse.Namespace) -> int:
    problem = _missing_extra() or _input_problem(args.files)  # before the replay is imported
    if problem is not None:
        return _fail(problem)

    from promptcache.replay._engine import DEFAULT_GAP_S, DEFAULT_STRATEGIES, run_replay
    from promptcache.replay._model_table import MAX_MIN_TOKENS, ModelTable, load_overrides
    from promptcache.replay._transcript import TranscriptError, TranscriptWarning

    if args.gap_s is None:
        args.gap_s = DEFAULT_GAP_S
    ttl = args.response_cache_ttl
    out = Path(args.out)
    problem = _option_problem(args, MAX_MIN_TOKENS) or _out_problem(out)  # checked before the run, not after
    if problem is not None:
        return _fail(problem)
    shown: list[tuple[Any, Any]] = []  # the progress bar and its task, once the run is long enough for one

    def progress(done: int, total: int | None) -> None:
        if done <= PROGRESS_MIN_REQUESTS or not sys.stderr.isatty():  # a bar off a terminal leaves a blank line
            return
        if not shown:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            bar = Progress(
                "replaying",
                BarColumn(),
                MofNCompleteColumn() if total else "{task.completed} requests",
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            bar.start()
            shown.append((bar, bar.add_task("replay", total=total)))
        if done % 50 == 0 or done == total:  # the total is unknown while streaming (None)
            bar, task = shown[0]
            bar.update(task, completed=done)

    try:
        with warnings.catch_warnings(record=True) as model_notes:  # (a dear cache read: one stderr line)
            warnings.simplefilter("always")
            table = ModelTable(
                load_overrides(args.models) if args.models else None, args.min_tokens, source=args.models
            )
        _report_warnings(model_notes)
    except ValueError as exc:
        return _fail(f"--models: {exc}")
    except RecursionError:  # tomllib / json recurse per nesting level
        return _fail(f"--models: {args.models}: nested too deeply to be a model table")
    for note in _session_notes(args.files):
        print(f"promptcache: warning: {note}", file=sys.stderr)
    caught: list[warnings.WarningMessage] = []
    failure: str | None = None  # printed after the warnings it may refer to ("each is named in a warning")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TranscriptWarning)
            result = run_replay(
                args.files,
                args.model if args.model is not None else DEFAULT_MODEL,
                args.strategies or DEFAULT_STRATEGIES,
                args.gap_s,
                progress=progress,
                response_cache_ttl_s=ttl,
                force_model=args.model is not None,
                models=table,
                tokens=args.tokens,
                strict=args.strict,
            )
    except TranscriptError as exc:
        failure = str(exc)
    except KeyError as exc:
        failure = str(exc.args[0]) if exc.args else str(exc)
    except ValueError as exc:
        failure = str(exc)
    finally:
        if shown:
            shown[0][0].stop()
        _report_warnings(caught)
    if failure is not None:
        return _fail(failure)
    for summary in (*result.skipped.warnings(), result.merged.summary()):
        if summary:
            print(f"promptcache: warning: {' '.join(summary.split())}", file=sys.stderr)
    if result.assumed_model_requests:
        unnamed = "any request" if result.model_source == "assumed" else f"{result.assumed_model_requests:,} requests"
        print(
            f"promptcache: warning: the log names no model for {unnamed}: priced and cached as {DEFAULT_MODEL}; "
            "pass --model MODEL_ID to price every call as the model that served it",
            file=sys.stderr,
        )
    result.monthly_requests = args.monthly_requests
    return _write_and_show(result, out, chart=not args.no_chart)


def _write_and_show(result: ReplayResult, out: Path, chart: bool) -> int:
    """Write ``replay.json`` (and ``replay.png`` with ``chart``) to ``out``, then print the terminal report; 2 when
    ``out`` cannot be written. The files come first: a reader of the report that goes away (``| head``) must not
    lose them, and it ends the report, not the command (exit 0)."""
    from rich.markup import escape

    from promptcache.replay._chart import write_chart
    from promptcache.replay._report import render_table, write_json
    from promptcache.replay._report_terminal import terminal_console

    try:
        written = [str(write_json(result, out / "replay.json"))]
        if chart:
            try:
                written.append(str(write_chart(result, out / "replay.png")))
            except (OSError, ValueError, RuntimeError) as exc:  # no older chart is left beside the new JSON
                with contextlib.suppress(OSError):
                    (out / "replay.png").unlink(missing_ok=True)
                if isinstance(exc, OSError):
                    raise
                return _fail(f"cannot draw the chart ({written[0]} is written): {' '.join(str(exc).split())}")
    except OSError as exc:
        return _fail(f"cannot write to --out {str(out)!r}: {exc.strerror or exc}")
    console = terminal_console()

    def reader_gone() -> None:  # Rich's own handler exits 1: the outputs are written, the run succeeded
        console.quiet = True
        _drop_stdout()

    console.on_broken_pipe = reader_gone  # type: ignore[method-assign]
    try:
        render_table(result, console)
        console.print(escape(f"wrote {', '.join(written)} ({result.seconds:.1f} s)"))
        sys.stdout.flush()
    except BrokenPipeError:
        _drop_stdout()
    return 0


def _drop_stdout() -> None:
    """After the reader of stdout has gone (``| head``): send what is left to ``os.devnull``, so that flushing
    stdout at exit does not fail again (Python documentation, ``signal``, "Note on SIGPIPE")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _missing_extra() -> str | None:
    """The error for a missing ``replay`` extra, or ``None``. The terminal table, the chart and the progress bar
    (rich, matplotlib) are imported once they are used, but looked up here, so a missing extra fails before any
    work."""
    try:
        for name in ("matplotlib", "rich"):
            if importlib.util.find_spec(name) is None:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    except ImportError as exc:
        from promptcache._errors import missing_extra

        return str(missing_extra("replay", exc))
    return None


_MOST_GAP_S = 365 * 24 * 3600  # --gap-s bound: every cache lifetime is far shorter; the span stays finite


def _option_problem(args: argparse.Namespace, max_min_tokens: int) -> str | None:
    """Why a numeric option of ``replay`` is refused (``None``: all are fine): ``--gap-s`` from 0 to a year,
    ``--response-cache-ttl-s`` finite and > 0, ``--monthly-requests`` > 0, ``--min-tokens`` from 0 to
    ``max_min_tokens``."""
    if not (args.gap_s >= 0 and args.gap_s != float("inf")):
        return f"--gap-s must be a finite number of seconds >= 0, got {args.gap_s!r}"
    if args.gap_s > _MOST_GAP_S:
        return f"--gap-s must be at most {_MOST_GAP_S:,} seconds (a year), got {args.gap_s!r}"
    ttl = args.response_cache_ttl
    if ttl is not None and not (0 < ttl < float("inf")):
        option = getattr(args, "response_cache_ttl_option", None) or "--response-cache-ttl-s"
        return f"{option} must be a finite number of seconds > 0, got {ttl!r}"
    if args.monthly_requests is not None and args.monthly_requests <= 0:
        return f"--monthly-requests must be an integer > 0, got {args.monthly_requests!r}"
    if args.min_tokens is not None and args.min_tokens < 0:
        return f"--min-tokens must be an integer >= 0, got {args.min_tokens!r}"
    if args.min_tokens is not None and args.min_tokens > max_min_tokens:
        return f"--min-tokens must be an integer from 0 to {max_min_tokens:,}, got {args.min_tokens!r}"
    return None


def _input_problem(files: Sequence[str]) -> str | None:
    """The first input the replay would refuse by its kind or size (`promptcache.replay._input_guard`), or
    ``None``: checked right after the arguments are parsed, so a named pipe, a device or a file over the size limit
    is an error at once, before the replay's modules are imported."""
    from promptcache.replay._input_guard import check_input_file
    from promptcache.replay._transcript import TranscriptError

    for name in files:
        if not os.path.lexists(name):
            continue  # a missing file is reported by the reader, after the options are checked
        if os.path.isdir(name):
            problem = _folder_problem(name)
            if problem is not None:
                return problem
            continue
        try:
            check_input_file(name)
        except TranscriptError as exc:
            return str(exc)
    return None


def _folder_problem(name: str) -> str | None:
    """Why directory ``name`` is not an input, or ``None``: a directory is read only as Claude Code sessions (a
    folder of project folders such as ``~/.claude/projects``, one project folder of ``<id>.jsonl`` logs, or one
    session's folder), so one holding none says what it must hold, and names its log files where it has some."""
    from promptcache.replay._claude_code import is_session_folder
    from promptcache.replay._inputs import is_project_folder, is_projects_root

    folder = Path(name)
    if is_session_folder(name) or is_project_folder(folder) or is_projects_root(folder):
        return None
    try:
        suffixes = sorted({p.suffix.lower() for p in folder.iterdir() if p.is_file()} & {".json", ".jsonl", ".gz"})
    except OSError:
        suffixes = []
    files = f"; for a log of another format give its files (e.g. {name.rstrip('/')}/*{suffixes[0]})" if suffixes else ""
    return (
        f"{name}: is a directory holding no Claude Code sessions: a directory is read only as Claude Code sessions, "
        "a folder of project folders (~/.claude/projects, every session of every project in one run), one "
        "project folder (session logs <id>.jsonl, as in ~/.claude/projects/<project>/) or one session's folder "
        f"(<id>/ beside <id>.jsonl, or holding subagents/agent-*.jsonl){files}"
    )


def _out_problem(out: Path) -> str | None:
    """Why ``--out`` cannot take replay.json and replay.png, or ``None``: every existing part of the path must be a
    directory, and the deepest existing one must really take what the run will put there. That is tried, not read
    from the permission bits (which say yes for root, or for ``/proc``, where nothing can be created): a temporary
    file is created and removed in ``out`` when it exists, else a temporary folder in the deepest existing parent
    (nothing is left behind before the run succeeds)."""
    try:
        blocker = next((p for p in (out, *out.parents) if p.exists()), None)
        if blocker is not None and not blocker.is_dir():
            return f"--out must be a directory, but {str(blocker)!r} is a file"
    except OSError as exc:  # e.g. a name longer than the file system allows
        return f"--out {str(out)!r} cannot be used: {exc.strerror or exc}"
    if blocker is None:
        return None
    try:
        _try_write(blocker, make_folder=blocker != out)
    except OSError as exc:  # no permission, a read-only or virtual file system (/proc)
        why = "" if exc.errno in (errno.EACCES, errno.EPERM) else f" ({exc.strerror or exc})"
        return f"--out {str(out)!r} cannot be written: {str(blocker)!r} is not writable{why}"
    return None


def _try_write(folder: Path, make_folder: bool) -> None:
    """Create and remove a temporary file (or, ``make_folder``, a temporary folder) in ``folder``.

    Raises:
        OSError: ``folder`` does not take it.
    """
    if make_folder:
        os.rmdir(tempfile.mkdtemp(prefix=".promptcache-check.", dir=folder))
        return
    fd, name = tempfile.mkstemp(prefix=".promptcache-check.", suffix=".tmp", dir=folder)
    os.close(fd)
    os.unlink(name)


def _head(path: Path, size: int = 1 << 16) -> bytes:
    with path.open("rb") as f:
        return f.read(size)


def _session_notes(files: Sequence[str]) -> list[str]:
    """What a Claude Code session replayed in part leaves out: a ``<session>.jsonl`` whose ``<session>/subagents``
    folder is beside it (its sub-agents and compaction call are not replayed), or a ``<session>/`` folder whose
    session log ``<session>.jsonl`` is missing (only its sub-agents are)."""
    from promptcache.replay._claude_code import is_claude_code_log

    notes = []
    given = {Path(f).resolve() for f in files}
    seen: set[Path] = set()
    for name in files:
        path = Path(name)
        if path.resolve() in seen:  # the same input given twice: one note (the replay counts it once)
            continue
        seen.add(path.resolve())
        try:
            if path.is_file() and path.suffix == ".jsonl":
                folder = path.with_suffix("")
                agents = sorted((folder / "subagents").glob("agent-*.jsonl")) if folder.is_dir() else []
                if agents and folder.resolve() not in given and is_claude_code_log(_head(path)):
                    notes.append(
                        f"{name}: its session folder {folder}/ holds {len(agents)} sub-agent log(s) (Task "
                        f"sub-agents, compaction) that are not replayed; pass {folder} instead to include them"
                    )
            elif path.is_dir() and any((path / "subagents").glob("agent-*.jsonl")):
                main_log = [p for p in (path.parent / f"{path.name}.jsonl", path / f"{path.name}.jsonl") if p.is_file()]
                if not main_log:
                    notes.append(
                        f"{name}: the session log {path.name}.jsonl is not beside the folder (nor inside it): only "
                        "its sub-agent logs are replayed, without the main conversation"
                    )
        except OSError:
            continue  # the reader reports unreadable paths itself
    return notes


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``promptcache`` console script. Returns the exit code (0 ok, 2 bad input). With no
    arguments it prints the help (its commands and what each does) and returns 2: nothing was run."""
    parser = build_parser()
    if not (sys.argv[1:] if argv is None else list(argv)):
        parser.print_help()
        return 2
    args = parser.parse_args(argv)
    if args.command == "replay":
        return _run_replay(args)
    if args.command == "calibrate-intentions":
        # One BLAS thread unless the user set it (before NumPy is imported): the local model's matrices are small,
        # and on a shared 2-core machine OpenBLAS's default threads made the command several times slower
        # (bench/README.md, "With embeddings proposing and a calibrated check accepting").
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ.setdefault(var, "1")
        from promptcache.intention._calibrate_cli import run

        return run(args)
    return _fail(f"unknown command {args.command!r}")  # pragma: no cover - argparse rejects it first


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

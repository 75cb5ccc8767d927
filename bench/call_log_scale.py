"""Reading call logs at scale: 1,000 / 10,000 records of each format ``promptcache replay`` detects.

Run by hand from the project root (figures go to bench/README.md, section "Replay: reading call logs"):

    python bench/call_log_scale.py [--sizes 1000 10000]

For each fixture of ``tests/data/call_logs/`` (LangSmith, Langfuse, OpenTelemetry, OpenAI proxy, Anthropic batch,
Claude Code stream-json) and a ``TrafficRecorder`` recording, the fixture's records are repeated with new ids (every
id, trace, thread, span, session and custom id gets a ``-<k>`` suffix, so each copy is its own conversation) until
the file holds the asked number of records, written as JSONL to a temporary directory (deleted afterwards). Each file
is read by ``promptcache.replay._readers.read_file`` in its own child process, which reports its CPU seconds and
peak resident memory (``getrusage(RUSAGE_SELF)``). Reading is linear when the time per record stays flat.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "call_logs"
FIXTURES = [
    "langsmith_runs.jsonl",
    "langfuse_observations.json",
    "otel_genai.json",
    "openai_proxy.jsonl",
    "anthropic_batch.jsonl",
    "stream_json.jsonl",
]
_ID_KEYS = {"id", "trace_id", "traceId", "spanId", "parentSpanId", "parent_run_id", "thread_id", "session_id",
            "custom_id", "tool_call_id", "call_id", "parentObservationId"}  # fmt: skip

_CHILD = """
import resource, sys
from promptcache.replay._readers import read_file
convs = read_file(sys.argv[1])
usage = resource.getrusage(resource.RUSAGE_SELF)
print(len(convs), sum(len(c.request_ends()) for c in convs))
print(f"{usage.ru_utime + usage.ru_stime:.2f}")
print(usage.ru_maxrss)
"""


def _suffixed(value: Any, k: int, key: str = "") -> Any:
    if isinstance(value, dict):
        return {n: _suffixed(v, k, n) for n, v in value.items()}
    if isinstance(value, list):
        return [_suffixed(v, k) for v in value]  # (an "id" list, as in LangChain serialisation, is no id)
    if isinstance(value, str) and key in _ID_KEYS:
        return f"{value}-{k}"
    return value


def _records(name: str) -> list[Any]:
    text = (DATA / name).read_text()
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    doc = json.loads(text)
    return doc["data"] if "data" in doc else [doc]


def _recording_records() -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage

    from promptcache import TrafficRecorder, with_processors
    from promptcache.testing import ScriptedChatModel

    usage = {
        "input_tokens": 900,
        "output_tokens": 5,
        "total_tokens": 905,
        "input_token_details": {"cache_read": 800, "cache_creation": 90},
    }
    replies = [AIMessage(f"answer {i}", usage_metadata=usage) for i in range(4)]
    stream = io.StringIO()
    wrapped = with_processors(ScriptedChatModel(replies=replies), [TrafficRecorder(stream)])
    history: list[Any] = []
    for i in range(4):
        history.append(HumanMessage(f"question {i} about the order"))
        history.append(wrapped.invoke(history, {"configurable": {"thread_id": "t", "user_id": "u"}}))
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def _write(path: Path, records: list[Any], n: int) -> None:
    with path.open("w") as out:
        written, k = 0, 0
        while written < n:
            for rec in records:
                if written == n:
                    break
                copy = _suffixed(rec, k)
                if "thread_id" in copy and copy.get("promptcache") == "call":
                    copy["thread_id"] = f"t-{k}"
                out.write(json.dumps(copy) + "\n")
                written += 1
            k += 1


def _read(path: Path) -> tuple[str, float, float]:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, check=True)
    counts, cpu, rss = out.stdout.split("\n")[:3]
    return counts, float(cpu), int(rss) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args()
    sources = {name: _records(name) for name in FIXTURES}
    sources["recording (TrafficRecorder)"] = _recording_records()
    print("| format | records | MB | conversations, calls | CPU s | us per record | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, records in sources.items():
            for n in args.sizes:
                path = Path(tmp) / f"log-{n}.jsonl"
                _write(path, records, n)
                counts, cpu, rss = _read(path)
                size = path.stat().st_size / 1e6
                print(f"| {name} | {n:,} | {size:.1f} | {counts} | {cpu:.2f} | {cpu / n * 1e6:.0f} | {rss:.0f} |")


if __name__ == "__main__":
    main()

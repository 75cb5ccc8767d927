"""Reading Anthropic Message Batches: the results JSONL, joined with the batch's requests when they are given.

Fields read (Anthropic API, "Message Batches"): a results line is ``{"custom_id", "result": {"type":
"succeeded" | "errored" | "canceled" | "expired", "message": <Message>}}`` whose ``message`` has ``model``,
``content`` and ``usage`` (``input_tokens`` uncached, ``cache_read_input_tokens``, ``cache_creation_input_tokens``,
``output_tokens``); a request is ``{"custom_id", "params": {"model", "system", "messages", "tools", ...}}`` as sent
in the batch's ``requests`` (``cache_control`` blocks are its cache points).

The results file does not hold the prompts. Put the requests you sent in the same file (``cat requests.jsonl
results.jsonl > batch.jsonl``) and each result replays with its request's prompt; a result without its request
replays from its usage alone (``promptcache.replay._calls.sized_call``). Results that did not succeed are skipped.
Batch results carry no timestamps: requests are spaced by ``--gap``.
"""

from __future__ import annotations

from promptcache._types import JSONMapping

from ._bedrock_bodies import ParsedCall, _anthropic
from ._calls import SIZES_ONLY, conversations, make_call, sized_call
from ._format import Format
from ._logged_usage import anthropic_usage
from ._messages import BadRecord, _content_blocks, _short
from ._transcript import Conversation, Message, Usage

__all__ = ["FORMAT_SPEC", "parse"]

_REQUEST = "batch-request"
_RESULT = "batch-result"


def _is_batch(rec: object) -> bool:
    return isinstance(rec, dict) and "custom_id" in rec and ("result" in rec or "params" in rec)


def parse(rec: JSONMapping, line: int) -> list[tuple[ParsedCall, str | None]]:
    """A request (kept until its result is read) or a succeeded result. Raises ``BadRecord``."""
    custom_id = str(rec["custom_id"])
    if "params" in rec:
        params = rec["params"]
        if not isinstance(params, dict) or not isinstance(params.get("messages"), list):
            raise BadRecord(("params",), f"a batch request's params need a messages list: {_short(params)}")
        system, tools, messages, points, _, _ = _anthropic({**params, "messages": params["messages"]}, {"content": []})
        call = make_call(request_id=custom_id, model=str(params.get("model") or ""), timestamp=None, system=system,
                         tools=tools, messages=messages, reply=Message("assistant", ()), cache_points=points,
                         line=line, operation=_REQUEST)  # fmt: skip
        return [(call, None)]
    result = rec["result"]
    if not isinstance(result, dict):
        raise BadRecord(("result",), f"a batch result must be an object, got {_short(result)}")
    if result.get("type") != "succeeded":
        return []
    message = result.get("message")
    if not isinstance(message, dict):
        raise BadRecord(("result", "message"), f"a succeeded result needs its message, got {_short(message)}")
    usage = anthropic_usage(message.get("usage")) or Usage()
    model = str(message.get("model") or "")
    blocks = tuple(_content_blocks(message.get("content") or [], ("result", "message", "content")))
    call = sized_call(request_id=custom_id, model=model, timestamp=None, usage=usage, line=line)
    call.reply = Message("assistant", blocks, None, usage, model or None)
    call.operation = _RESULT
    return [(call, None)]


def finish(name: str, calls: list[ParsedCall]) -> list[Conversation]:
    """Join each result with its request (by ``custom_id``); conversations from the joined calls."""
    requests = {c.request_id: c for c in calls if c.operation == _REQUEST}
    joined: list[ParsedCall] = []
    for call in calls:
        if call.operation != _RESULT:
            continue
        request = requests.get(call.request_id)
        if request is None:
            call.operation = SIZES_ONLY
            joined.append(call)
            continue
        request.reply = call.reply
        request.model = request.model or call.model
        request.operation = "batch"
        joined.append(request)
    return conversations(name, joined, "anthropic-batch")


FORMAT_SPEC = Format(
    name="Anthropic Message Batches results",
    key="anthropic-batch",
    signature=("custom_id", "result", "result.message", "result.message.usage"),
    matches=_is_batch,
    parse=parse,
    finish=finish,
)

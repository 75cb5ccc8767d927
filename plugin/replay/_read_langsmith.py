"""Reading LangSmith run exports: the ``llm`` runs of traced agents, one model call each.

Fields read (LangSmith "Run (span) data format"): ``id``, ``run_type``, ``start_time``, ``inputs``, ``outputs``,
``error``, ``extra`` (``metadata``, ``invocation_params``), ``trace_id``, ``parent_run_id``, ``prompt_tokens``,
``completion_tokens``, ``prompt_token_details`` (``cache_read``, ``cache_creation``). A file is a JSON array of
runs, ``{"runs": [...]}``, or one run per line (JSONL), as ``Client.list_runs`` results are written out.

- Only ``run_type == "llm"`` runs are calls; ``chain`` / ``tool`` / ... runs are the trace's other spans and are
  skipped, as are runs that ended in ``error`` without ``outputs``.
- The prompt is ``inputs.messages`` (a list of messages, or a list holding one such list, as LangChain chat-model
  runs log their batch), messages in LangChain's serialised form (``{"lc": 1, "kwargs": {...}}``), OpenAI or
  Anthropic form; leading system messages are the system prompt; tools are ``inputs.tools``, else
  ``extra.invocation_params.tools``.
- The reply is ``outputs.generations[0][0].message`` (LangChain), else ``outputs.messages[0]``, else
  ``outputs.choices[0].message`` (an OpenAI-wrapper run), else ``outputs`` itself when it is a message.
- Usage: the reply's ``usage_metadata``; else ``outputs.usage_metadata`` / ``outputs.usage`` /
  ``outputs.llm_output.token_usage``; else the run's ``prompt_tokens`` (the whole prompt, cache included) with
  ``prompt_token_details``.
- Conversations are rebuilt per thread: ``extra.metadata`` ``thread_id`` / ``session_id`` / ``conversation_id``
  when set (LangSmith threads), else the run's ``trace_id`` (else ``parent_run_id``); within it a call whose prompt
  extends an earlier one continues it (``promptcache.replay._calls``). The model is ``extra.metadata.ls_model_name``
  or ``extra.invocation_params`` ``model`` / ``model_id`` / ``model_name``; the family is ``extra.metadata.user_id``.
"""

from __future__ import annotations

from promptcache._types import JSONMapping

from ._bedrock_bodies import ParsedCall
from ._calls import make_call, plain_message, prompt_of, usage_of
from ._format import Format
from ._jsonpos import JSONPath
from ._logged_usage import count_of
from ._messages import BadRecord, _short, normalise_message, parse_timestamp
from ._transcript import Message, Usage

__all__ = ["FORMAT_SPEC", "parse"]

_THREAD_KEYS = ("thread_id", "session_id", "conversation_id")


def _is_run(rec: object) -> bool:
    return isinstance(rec, dict) and "run_type" in rec and "inputs" in rec


def parse(rec: JSONMapping, line: int) -> list[tuple[ParsedCall, str | None]]:
    """The call of one ``llm`` run (none for other runs). Raises ``BadRecord``."""
    if rec.get("run_type") != "llm" or (rec.get("error") and not rec.get("outputs")):
        return []
    inputs, outputs = rec.get("inputs"), rec.get("outputs")
    if not isinstance(inputs, dict):
        raise BadRecord(("inputs",), f"an llm run's inputs must be an object, got {_short(inputs)}")
    raw_messages = inputs.get("messages")
    where: JSONPath
    if isinstance(raw_messages, list) and raw_messages and isinstance(raw_messages[0], list):
        raw_messages, where = raw_messages[0], ("inputs", "messages", 0)
    else:
        where = ("inputs", "messages")
    if raw_messages is None and isinstance(inputs.get("prompts"), list):
        raw_messages, where = [{"role": "user", "content": str(p)} for p in inputs["prompts"]], ("inputs", "prompts")
    if raw_messages is None:
        raise BadRecord(("inputs",), f"llm run without inputs.messages: {_short(inputs)}")
    system, messages, points = prompt_of(raw_messages, where)
    if not messages:
        raise BadRecord(where, "llm run whose prompt has no messages besides the system prompt")
    extra = _obj(rec.get("extra"))
    metadata, params = _obj(extra.get("metadata")), _obj(extra.get("invocation_params"))
    tools = inputs.get("tools") or params.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise BadRecord(("inputs", "tools"), f"tools must be a list of tool schemas, got {_short(tools)}")
    reply_raw, reply_at = _reply(outputs)
    reply = normalise_message(plain_message(reply_raw), reply_at)
    model = next(
        (str(v) for v in (metadata.get("ls_model_name"), *(params.get(k) for k in ("model", "model_id", "model_name")))
         if v),
        "",
    )  # fmt: skip
    stamp = parse_timestamp(rec.get("start_time"), ("start_time",))
    usage = reply.usage or _outputs_usage(outputs) or _run_usage(rec)
    scope = next((str(metadata[k]) for k in _THREAD_KEYS if metadata.get(k)), None)
    scope = scope or str(rec.get("trace_id") or rec.get("parent_run_id") or "")
    call = make_call(
        request_id=str(rec.get("id") or f"line{line}"),
        model=model or (reply.model or ""),
        timestamp=stamp,
        system=system,
        tools=tools,
        messages=messages,
        reply=Message("assistant", reply.blocks, stamp, usage, model or reply.model),
        cache_points=points,
        scope=scope,
        line=line,
    )
    user = metadata.get("user_id")
    return [(call, f"user:{user}" if user else None)]


def _obj(value: object) -> JSONMapping:
    return value if isinstance(value, dict) else {}


def _reply(outputs: object) -> tuple[object, JSONPath]:
    at: JSONPath
    if not isinstance(outputs, dict):
        raise BadRecord(("outputs",), f"an llm run's outputs must be an object, got {_short(outputs)}")
    gens = outputs.get("generations")
    if isinstance(gens, list) and gens:
        first, at = gens[0], ("outputs", "generations", 0)
        if isinstance(first, list) and first:
            first, at = first[0], (*at, 0)
        if isinstance(first, dict) and isinstance(first.get("message"), dict):
            return first["message"], (*at, "message")
        if isinstance(first, dict) and isinstance(first.get("text"), str):
            return {"role": "assistant", "content": first["text"]}, at
    for key in ("messages", "choices"):
        items = outputs.get(key)
        if isinstance(items, list) and items and isinstance(items[0], dict):
            item = items[0].get("message", items[0]) if key == "choices" else items[0]
            return item, ("outputs", key, 0)
    if "role" in outputs or "lc" in outputs or ("type" in outputs and "content" in outputs):
        return outputs, ("outputs",)
    raise BadRecord(("outputs",), f"llm run without a reply (generations, messages or choices): {_short(outputs)}")


def _outputs_usage(outputs: object) -> Usage | None:
    if not isinstance(outputs, dict):
        return None
    llm_output = _obj(outputs.get("llm_output"))
    for raw in (outputs.get("usage_metadata"), outputs.get("usage"), llm_output.get("token_usage")):
        usage = usage_of(raw)
        if usage is not None:
            return usage
    return None


def _run_usage(rec: JSONMapping) -> Usage | None:
    if "prompt_tokens" not in rec and "completion_tokens" not in rec:
        return None
    details = rec.get("prompt_token_details")
    read, write = count_of(details, "cache_read"), count_of(details, "cache_creation")
    prompt = count_of(rec, "prompt_tokens")
    return Usage(max(prompt - read - write, 0), read, write, 0, count_of(rec, "completion_tokens"))


FORMAT_SPEC = Format(
    name="LangSmith runs",
    key="langsmith",
    signature=("run_type", "inputs", "outputs", "trace_id"),
    matches=_is_run,
    parse=parse,
)

"""Every private API of another package that promptcache relies on, in one place.

LangChain, LangGraph and langchain-aws offer no public way to do these few things; each reliance is named here,
with why it is needed, and ``tests/api/test_outside_private_apis.py`` checks every one against the installed
versions, failing with the package and version when a release changes it:

- LangChain ``BaseChatModel._get_llm_string()``: the string LangChain's own ``BaseCache`` keys replies on (model
  class + invocation parameters). `ResponseCache` keys on the same string so that two models answer from one entry
  exactly when LangChain's cache would let them. `LLM_STRING_METHODS` are the methods it reads; a model class
  overriding any of them is keyed by calling ``_get_llm_string()`` itself. `SERIALIZED_ATTR` is the attribute
  LangChain caches a model's serialised form in (left out of the model's state fingerprint).
- LangGraph's ``configurable["__pregel_read"]`` (`PREGEL_READ_KEY`, LangGraph's ``CONFIG_KEY_READ``): the channel
  reader a running node gets; `MemoryNode` uses it to check, before it writes, that the graph's state has the keys
  it writes (without it a wrong state schema fails later, inside LangGraph).
- langchain-aws ``ChatBedrockConverse._apply_cache_points(cache_control, system, bedrock_messages, params)``
  (`LANGCHAIN_AWS_CACHE_POINT_HOOK`): the method that sees the final Converse request;
  `CachePointChatBedrockConverse` overrides it to place its cache points.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = [
    "LANGCHAIN_AWS_CACHE_POINT_HOOK",
    "LANGCHAIN_AWS_HOOK_PARAMETERS",
    "LLM_STRING_METHODS",
    "PREGEL_READ_KEY",
    "SERIALIZED_ATTR",
    "langchain_llm_string",
]

#: BaseChatModel methods ``_get_llm_string`` relies on for a model that is not serialisable.
LLM_STRING_METHODS: Final = ("_get_llm_string", "_get_invocation_params", "_dict_for_compat", "dict", "asdict")
#: The attribute in which LangChain caches a model's serialised form.
SERIALIZED_ATTR: Final = "_serialized"
#: The ``configurable`` key of LangGraph's channel reader in a running node.
PREGEL_READ_KEY: Final = "__pregel_read"
#: The ChatBedrockConverse method `CachePointChatBedrockConverse` overrides, and its parameters in order.
LANGCHAIN_AWS_CACHE_POINT_HOOK: Final = "_apply_cache_points"
LANGCHAIN_AWS_HOOK_PARAMETERS: Final = ("self", "cache_control", "system", "bedrock_messages", "params")


def langchain_llm_string(model: Any) -> str:
    """LangChain's cache string of ``model`` (``model._get_llm_string()``; no stop words, no extra kwargs).

    Raises:
        Whatever the model's own ``_get_llm_string`` raises.
    """
    value: str = model._get_llm_string()
    return value

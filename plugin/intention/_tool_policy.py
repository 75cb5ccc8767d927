"""Which tools `IntentionCache` never stores nor serves: the side-effecting ones, by name prefix, by name, or by a
mark on the tool; and which arguments are left out of the stored ones."""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "DEFAULT_DENY_TOOLS",
    "DEFAULT_SIDE_EFFECT_PREFIXES",
    "DEFAULT_VOLATILE_ARGS",
    "SIDE_EFFECT_METADATA_KEY",
    "tool_words",
]

DEFAULT_SIDE_EFFECT_PREFIXES: tuple[str, ...] = (
    # the default deny list
    "send_",
    "delete_",
    "create_",
    "update_",
    "write_",
    # state-changing verbs seen in recorded agent traffic (tau-bench airline: book_reservation, cancel_reservation,
    # transfer_to_human_agents; update_reservation_* is covered above) and their common synonyms
    "book_",
    "cancel_",
    "change_",
    "modify_",
    "transfer_",
    "edit_",
    "set_",
    "reset_",
    "add_",
    "remove_",
    "insert_",
    "upsert_",
    "save_",
    "upload_",
    "submit_",
    "publish_",
    "deploy_",
    "execute_",
    "post_",
    "put_",
    "patch_",
    "pay_",
    "refund_",
    "charge_",
    "purchase_",
    "redeem_",
    "reserve_",
    "schedule_",
    "register_",
    "subscribe_",
    "unsubscribe_",
    "enroll_",
    "join_",
    "leave_",
    "start_",
    "stop_",
    "approve_",
    "reject_",
    "assign_",
    "grant_",
    "revoke_",
    "notify_",
    "email_",
)
"""Tool-name prefixes treated as side-effecting: their results are never stored, so never handed back from memory.

A tool whose name starts with a state-changing verb acts on the world (a booking, a payment, a message): replaying
its earlier result would skip the action while telling the model it happened, and its result describes a one-off
event rather than a fact to look up again. The list holds five (``send_ delete_ create_ update_
write_``), the state-changing verbs of the recorded tau-bench airline traffic (``book_``, ``cancel_``,
``transfer_``; ``update_reservation_*`` and ``send_certificate`` are already covered; see bench/README.md
"Replay"), their synonyms (``change_ modify_ edit_ set_ reset_``), and the usual write verbs of CRUD/REST APIs
(``add_ remove_ insert_ upsert_ save_ upload_ submit_ publish_ deploy_ execute_``; HTTP ``post_ put_ patch_``),
payments, bookings and memberships (``pay_ refund_ charge_ purchase_ redeem_ reserve_ schedule_ register_
subscribe_ unsubscribe_ enroll_ join_ leave_``), processes (``start_ stop_``, e.g. ``start_return``) and
workflows/messaging (``approve_ reject_ assign_ grant_ revoke_ notify_ email_``). Read
verbs (``get_ list_ search_ find_ lookup_ fetch_ read_ check_ calculate``) are not on it.

Matching is by prefix of the tool name in snake_case (`tool_words`): camelCase, PascalCase and kebab-case
names are split into lower-case words joined by ``_`` first, so ``sendEmail``, ``SendEmail``, ``send-email`` and
``send_email`` all match ``send_`` (and ``HTTPPost`` -> ``http_post``). A name that is the bare verb (``send``) or
runs words together in one case (``sendemail``) does not match. A false positive only costs a cache miss, a false
negative can replay an action, so the list errs on the side of denying. Pass ``deny_prefixes=`` to replace it
(given prefixes are put in the same form), ``deny_tools=``/``allow_tools=`` to adjust single tools.

Tools whose name no prefix catches are denied by name (`DEFAULT_DENY_TOOLS`: promptcache's own ``remember``,
which writes a memory) or by a mark on the tool (``metadata={SIDE_EFFECT_METADATA_KEY: True}``, set by
`promptcache.memory.make_remember_tool` whatever its ``name``)."""
DEFAULT_DENY_TOOLS: tuple[str, ...] = ("remember",)
"""Tool names denied by default (``IntentionCache(deny_tools=...)``; passing ``deny_tools`` replaces them: add
``*DEFAULT_DENY_TOOLS`` to keep them): ``remember`` (`promptcache.memory.make_remember_tool`) saves a memory,
so serving its earlier reply would tell the model a memory was saved that was not."""
SIDE_EFFECT_METADATA_KEY = "promptcache_side_effect"
"""A tool whose ``metadata`` has this key set to ``True`` is side-effecting: never stored nor served by
`IntentionCache`, whatever its name and the deny/allow lists."""
DEFAULT_VOLATILE_ARGS: frozenset[str] = frozenset(
    {"timestamp", "ts", "time", "now", "current_time", "datetime", "request_id", "trace_id", "nonce"}
)
"""Argument names left out of the stored arguments (values that change on every call)."""

_SEPARATORS_RE = re.compile(r"[\W_]+")
_LOWER_UPPER_RE = re.compile(r"(?<=[^\W_A-Z])(?=[A-Z])")  # a lower-case letter or digit, then a capital: sendEmail
_ACRONYM_RE = re.compile(r"(?<=[A-Z])(?=[A-Z][a-z])")  # the last capital of an acronym starts a word: HTTPPost


@lru_cache(maxsize=4096)
def tool_words(name: str) -> str:
    """``name`` in snake_case, the form `DEFAULT_SIDE_EFFECT_PREFIXES` are matched against: camelCase /
    PascalCase words split (``BookFlight`` -> ``book_flight``, ``HTTPPost`` -> ``http_post``), runs of other
    characters than letters and digits (``-``, ``.``, spaces, ``__``) made one ``_``, lower-cased; leading ``_`` are
    dropped, a trailing one kept (a prefix such as ``"send_"`` keeps its meaning)."""
    text = _ACRONYM_RE.sub("_", _LOWER_UPPER_RE.sub("_", name))
    return _SEPARATORS_RE.sub("_", text).lower().lstrip("_")

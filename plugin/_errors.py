"""The package's one exception base.

Every exception promptcache defines derives from `PromptCacheError`, and each keeps the built-in base it had, so
``except ValueError`` and ``except PromptCacheError`` both catch it::

    PromptCacheError
    ├── IntentionBackendError (RuntimeError)  intention backend unreachable or unreadable (promptcache.intention)
    ├── CorruptEntry (ValueError)              a stored response-cache value that is not an entry (read as a miss)
    ├── MemoryStateError (KeyError)            a graph state that cannot carry MemoryNode's keys (integrations.langgraph)
    ├── TranscriptError (ValueError)           a recorded conversation the replay cannot read (promptcache.replay)
    ├── BadRecord (ValueError)                 one malformed record inside a transcript (replay readers)
    ├── UnsupportedBody                        a logged request body the Bedrock log reader does not replay
    ├── StrategyUnavailable (RuntimeError)     a replay strategy whose implementation is not installed
    └── MissingExtraError (ImportError)        an optional part imported without its extra installed

Bad arguments to a constructor or function raise the built-in `TypeError` / `ValueError` naming the argument and
the value, as Python's own functions do.
"""

from __future__ import annotations

__all__ = ["EXTRAS", "MissingExtraError", "PromptCacheError", "missing_extra"]


class PromptCacheError(Exception):
    """Base class of every exception promptcache raises on its own account (the tree is in this module's docstring)."""


#: The optional parts and the extra that installs each (``pip install "promptcache[<extra>]"``; pyproject.toml).
EXTRAS: dict[str, str] = {
    "redis": "promptcache.integrations.redis (RedisCache, RedisIntentionBackend)",
    "bedrock": "promptcache.integrations.bedrock (CachePointChatBedrockConverse, BedrockCachePoints)",
    "postgres": "PostgresStore for typed memory (langgraph-checkpoint-postgres)",
    "replay": "the promptcache replay command (terminal table and chart)",
    "otel": "promptcache's counters as OpenTelemetry metrics",
}


class MissingExtraError(PromptCacheError, ImportError):
    """An optional part was imported without the package its extra installs; the message names the ``pip install``.

    Attributes:
        extra: the extra to install (a key of `EXTRAS`).
    """

    def __init__(self, extra: str, missing: str) -> None:
        if extra not in EXTRAS:
            raise ValueError(f"unknown extra {extra!r}; known: {sorted(EXTRAS)}")
        self.extra = extra
        super().__init__(
            f"{EXTRAS[extra]} needs the {missing!r} package, which is not installed: "
            f'pip install "promptcache[{extra}]"',
            name=missing,
        )


def missing_extra(extra: str, error: ImportError) -> MissingExtraError:
    """The `MissingExtraError` to raise (``from error``) when importing an optional dependency failed.

    Args:
        extra: the extra that installs it (``"redis"``, ``"bedrock"``, ``"postgres"``, ``"replay"``, ``"otel"``).
        error: the ``ImportError`` raised by the import; its ``name`` (the missing top-level package) is reported.

    Returns:
        The error, for ``raise missing_extra("redis", exc) from exc``.
    """
    return MissingExtraError(extra, (error.name or str(error)).split(".")[0])

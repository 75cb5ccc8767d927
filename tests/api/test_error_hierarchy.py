"""Every exception class the package defines derives from `PromptCacheError` and keeps its built-in base."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from promptcache import PromptCacheError


def _package_modules() -> list[str]:
    import promptcache.integrations

    names = [info.name for info in pkgutil.walk_packages(promptcache.__path__, "promptcache.")]
    names += [
        info.name for info in pkgutil.walk_packages(promptcache.integrations.__path__, "promptcache.integrations.")
    ]
    return [name for name in names if not name.endswith("__main__")]


def test_every_defined_exception_derives_from_the_base() -> None:
    outside = []
    found = []
    for name in _package_modules():
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != name or not issubclass(cls, BaseException) or issubclass(cls, Warning):
                continue
            found.append(cls.__name__)
            if not issubclass(cls, PromptCacheError):
                outside.append(f"{name}.{cls.__name__}")
    assert outside == []
    assert {"TranscriptError", "IntentionBackendError", "CorruptEntry", "MemoryStateError"} <= set(found)


def test_errors_keep_their_builtin_base() -> None:
    from promptcache.integrations.langgraph import MemoryStateError
    from promptcache.intention._backends import IntentionBackendError
    from promptcache.replay import TranscriptError

    assert issubclass(TranscriptError, ValueError)
    assert issubclass(IntentionBackendError, RuntimeError)
    assert issubclass(MemoryStateError, KeyError)

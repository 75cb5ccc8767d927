"""Rate-limited warnings for fail-open paths (a dead cache must not flood the log)."""

from __future__ import annotations

import logging
import threading
import time

__all__ = ["ThrottledWarning", "get_logger"]


def get_logger(name: str) -> logging.Logger:
    """The package's logger for ``name`` (a child of ``promptcache``)."""
    return logging.getLogger(name if name.startswith("promptcache") else f"promptcache.{name}")


class ThrottledWarning:
    """Logs a warning at most once every ``interval_s`` seconds (default 60); counts the ones it held back.

    Used wherever a failure is turned into a miss: the user's call goes on, the operator sees one line a minute.
    """

    def __init__(self, logger: logging.Logger, interval_s: float = 60.0) -> None:
        self._logger = logger
        self._interval_s = interval_s
        self._last = float("-inf")
        self._suppressed = 0
        self._lock = threading.Lock()

    def warn(self, message: str, *args: object, exc: BaseException | None = None) -> bool:
        """Log ``message % args`` (with ``exc`` named) unless one was logged within the interval.

        Returns:
            True when the line was written.
        """
        now = time.monotonic()
        with self._lock:
            if now - self._last < self._interval_s:
                self._suppressed += 1
                return False
            suppressed, self._suppressed, self._last = self._suppressed, 0, now
        suffix = f" ({suppressed} similar suppressed)" if suppressed else ""
        if exc is not None:
            suffix = f": {type(exc).__name__}: {exc}{suffix}"
        self._logger.warning(message + suffix, *args)
        return True

"""``IntentionMemory``: tool results stored per user under the user's intention, found again by intention.

An intention can hold several memories, one per tool call (``(tool, args)``). A lookup first picks the stored
intention that answers the query (`promptcache.intention._lookup`): **exact**, an earlier intention of the same user
with the query's normalised form (`normalize_intention`); else **similar**, one that *means the same* (a `Verifier`
accepted it; by default the model-free `LexicalVerifier`: every difference between the two texts is an equivalence,
`promptcache.intention._meaning`) whose similarity is at least ``threshold``; of several about as similar as the best
(within ``margin``), the newest (tool results change over time). With ``embeddings=``, the embeddings propose and
vetoes and a calibrated threshold accept (`promptcache.intention._recall`).

`IntentionMemory.retrieve_all` returns every memory of that intention (most recent first), `IntentionMemory.retrieve`
the most recent one; both can be narrowed to one ``tool`` and/or ``args``. ``threshold=1.0`` or ``exact_only=True``:
exact matches only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from langchain_core.embeddings import Embeddings

from promptcache._log import ThrottledWarning, get_logger
from promptcache._metrics import PluginMetrics, PluginStats
from promptcache._option_checks import check_callable
from promptcache.backends._base import validate_ttl
from promptcache.intention._backends import IntentionBackend, IntentionBackendError
from promptcache.intention._checks import check_unit, check_user
from promptcache.intention._consensus import consensus_gap
from promptcache.intention._defaults import (
    DEFAULT_INTENTION_MARGIN,
    DEFAULT_INTENTION_THRESHOLD,
    DEFAULT_INTENTION_TTL_SECONDS,
    DEFAULT_MAX_ERROR,
    DEFAULT_PROPOSAL_FLOOR,
    DEFAULT_PROPOSALS,
    DEFAULT_SUGGESTIONS,
    IntentionStats,
)
from promptcache.intention._differences import WordCheck
from promptcache.intention._judges import Verifier, as_verifier
from promptcache.intention._lookup import find_steps
from promptcache.intention._memory_backend import InMemoryIntentionBackend
from promptcache.intention._prepared import PreparedCache
from promptcache.intention._recall import find_recall, suggest, suggested
from promptcache.intention._record import MemoryRecord
from promptcache.intention._requests import check_lookup, check_suggest, new_record, prefetched, with_features
from promptcache.intention._results import IntentionMatch, to_matches
from promptcache.intention._similarity import EmbeddingsSimilarity, Similarity, as_similarity
from promptcache.intention._steps import Steps, arun, call, run
from promptcache.intention._thresholds import Thresholds
from promptcache.intention._vector_index import IndexCache

__all__ = [
    "DEFAULT_INTENTION_MARGIN",
    "DEFAULT_INTENTION_THRESHOLD",
    "DEFAULT_INTENTION_TTL_SECONDS",
    "IntentionMatch",
    "IntentionMemory",
    "IntentionStats",
]

_log = get_logger("promptcache.intention")


class IntentionMemory(Thresholds):
    """Tool results per user, keyed by intention, with expiry (sync and async).

    Args:
        backend: an `IntentionBackend` (default: a new ``InMemoryIntentionBackend``; Redis:
            ``promptcache.integrations._redis_intention.RedisIntentionBackend``).
        ttl_s: seconds a memory lives (default `DEFAULT_INTENTION_TTL_SECONDS`), a finite number > 0.
        similarity: ``None`` (the model-free `LexicalSimilarity`), a `Similarity`, or any LangChain ``Embeddings``.
        embeddings: any LangChain ``Embeddings`` to propose candidates (not with ``similarity=``); vectors are
            stored with the records and kept per user in a vector index (`promptcache.intention._vector_index`).
        threshold: in ``[0, 1]``; ``1.0``: exact only. Below 1.0, with ``embeddings=``: the least cosine of an
            embeddings-stage match (the lexical stage accepts at every threshold below 1.0; consensus and a model
            verifier have their own bounds), as ``promptcache calibrate-intentions`` counts it; without: the least
            lexical similarity. Default: see `threshold`. ``0.0`` does not accept everything: vetoes still refuse.
        max_error: with ``embeddings=``: the wrong-hit rate the calibrated threshold keeps to (default
            `DEFAULT_MAX_ERROR`).
        proposals: with ``embeddings=``: candidates proposed per lookup, an int >= 1 (`DEFAULT_PROPOSALS`).
        proposal_floor: with ``embeddings=``: the least cosine a model verifier is asked about
            (`DEFAULT_PROPOSAL_FLOOR`).
        margin: verified candidates within this much of the best similarity count as equally good, and the
            newest of them is served; in ``[0, 1]`` (default `DEFAULT_INTENTION_MARGIN`).
        verifier: what a similar match must pass before it is served: ``None`` (the model-free
            `LexicalVerifier`) or a `Verifier` such as `ChatModelVerifier` (more hits; asks a chat model).
        clock: returns epoch seconds (default ``time.time``; injectable for tests).

    Raises:
        TypeError / ValueError: a bad argument, named in the message.
    """

    def __init__(
        self,
        backend: IntentionBackend | None = None,
        *,
        ttl_s: float = DEFAULT_INTENTION_TTL_SECONDS,
        similarity: Similarity | Embeddings | None = None,
        threshold: float | None = None,
        margin: float = DEFAULT_INTENTION_MARGIN,
        clock: Callable[[], float] = time.time,
        verifier: Verifier | None = None,
        embeddings: Embeddings | None = None,
        max_error: float = DEFAULT_MAX_ERROR,
        proposals: int = DEFAULT_PROPOSALS,
        proposal_floor: float = DEFAULT_PROPOSAL_FLOOR,
    ) -> None:
        if backend is None:
            backend = InMemoryIntentionBackend()
        if not isinstance(backend, IntentionBackend):
            raise TypeError(f"backend must be an IntentionBackend, got {type(backend).__name__}")
        if ttl_s is None:
            raise ValueError("ttl_s must be a finite number of seconds > 0, got None (memories must expire)")
        self.backend = backend
        self.ttl_s = validate_ttl(ttl_s)
        if embeddings is not None:
            if similarity is not None:
                raise ValueError("pass embeddings= or similarity=, not both")
            similarity = EmbeddingsSimilarity(embeddings)
        self.similarity: Similarity = as_similarity(similarity)
        self.recall = isinstance(self.similarity, EmbeddingsSimilarity)
        self.calibrates = embeddings is not None
        """Whether lookups propose candidates by embeddings (`promptcache.intention._recall`)."""
        self._threshold = None if threshold is None else check_unit(threshold, "threshold")
        self.exact_only = self._threshold == 1.0
        """``threshold=1.0`` was given: exact matches only."""
        self.max_error = check_unit(max_error, "max_error")
        if isinstance(proposals, bool) or not isinstance(proposals, int) or proposals < 1:
            raise ValueError(f"proposals must be an int >= 1, got {proposals!r}")
        self.proposals = proposals
        self.proposal_floor = check_unit(proposal_floor, "proposal_floor")
        self.consensus_gap: float | None = (
            consensus_gap(self.similarity.name, self.max_error) if self.calibrates else None
        )
        """With ``embeddings=``: the calibrated gap of the consensus stage (`promptcache.intention._consensus`),
        shipped for the default local model; ``None`` (the stage off) for other models. Settable."""
        self.indexes = IndexCache()
        self.word_check = WordCheck(getattr(self.similarity, "embeddings", None))
        self.margin = check_unit(margin, "margin")
        self.verifier: Verifier = as_verifier(verifier)
        self.clock = check_callable(clock, "clock")
        self._warning = ThrottledWarning(_log)
        self._lock = threading.Lock()
        self.prepared = PreparedCache()
        self.metrics = PluginMetrics("intention_memory")
        self._usage_base: tuple[int, ...] = (0, 0, 0)

    def stats(self, reset: bool = False) -> PluginStats:
        """Counts: ``hits`` / ``misses`` (lookups: ``retrieve``, ``retrieve_all`` and their async twins, that found
        a memory or not, failures included as misses), ``writes`` (memories stored), ``errors`` (backend failures
        of stores and lookups). Tokens and dollars are not known here (see ``IntentionCache``). Also sent to
        OpenTelemetry (`promptcache._metrics`). With a model verifier (one with ``usage()``, such as
        `ChatModelVerifier`), also its cost since the last reset: ``verifier_calls``, ``verifier_input_tokens``,
        ``verifier_output_tokens`` (an `IntentionStats`)."""
        base = self.metrics.snapshot(reset)
        usage = getattr(self.verifier, "usage", None)
        if not callable(usage):
            return base  # no model verifier: nothing else to count
        now = usage()
        with self._lock:
            delta = [a - b for a, b in zip(now, self._usage_base)]
            if reset:
                self._usage_base = tuple(now)
        return IntentionStats(
            **base.as_dict(), verifier_calls=delta[0], verifier_input_tokens=delta[1], verifier_output_tokens=delta[2]
        )

    # -- store -----------------------------------------------------------------------------------------------
    def _store_steps(self, user: str, record: MemoryRecord, data: bytes) -> Steps[bool]:
        try:
            features = (yield call(self.similarity, "encode", [record.intention]))[0]
            yield call(self.backend, "put", user, with_features(record, features), data, record.created_at)
        except Exception as exc:  # noqa: BLE001 - a failing store never breaks the caller
            self.metrics.error()
            self._warning.warn("promptcache: intention memory store failed; not stored", exc=exc)
            return False
        self.metrics.write()
        return True

    def store(self, user_id: str, intention: str, result: object, tool: str | None = None, args: object = None) -> bool:
        """Remember ``result`` (a JSON value) for ``user_id`` under ``intention``.

        The same (intention, tool, args) stored again replaces the earlier memory; an identical result is stored
        once, under its content hash.

        Args:
            user_id: a non-empty ``str`` (or ``int``). intention: text with at least one letter or digit.
            result: a JSON value (``str``, number, ``bool``, ``None``, ``list``/``tuple``/``dict`` of those).
            tool: the tool's name (a non-empty ``str``) or ``None``. args: its arguments (a JSON value) or ``None``.

        Returns:
            True when written, False when the backend failed (logged at most once a minute).

        Raises:
            TypeError / ValueError: empty intention or user id; a user id, intention or tool name holding a lone
                surrogate (not storable as UTF-8); a result or args that are not JSON values (e.g. a ``datetime``,
                ``date``, ``UUID`` or object) or hold NaN/infinity (JSON has neither); a bad tool name. All checked
                before anything is written, whatever the backend.
        """
        return run(
            self._store_steps(
                *new_record(user_id, intention, result, tool, args, self.clock(), self.ttl_s, self.similarity.name)
            )
        )

    async def astore(
        self, user_id: str, intention: str, result: object, tool: str | None = None, args: object = None
    ) -> bool:
        """Async `store`."""
        return await arun(
            self._store_steps(
                *new_record(user_id, intention, result, tool, args, self.clock(), self.ttl_s, self.similarity.name)
            )
        )

    # -- retrieve --------------------------------------------------------------------------------------------
    def _lookup(
        self, user_id: str, intention: str, tool: str | None, args: object, exact: bool, fail_open: bool, first: bool
    ) -> Steps[list[IntentionMatch]]:
        user, json_args = check_lookup(user_id, intention, tool, args)
        try:
            finder = find_recall if self.recall else find_steps
            picked, now = yield from finder(self, user, intention, tool, json_args, exact)
            if picked is None:
                return self.metrics.lookup([])
            group = picked.group[:1] if first else picked.group
            raws = prefetched(group, picked.results)
            if raws is None:
                if first:
                    raws = [(yield call(self.backend, "result", user, group[0].result_hash))]
                else:
                    raws = yield call(self.backend, "results", user, [r.result_hash for r in group])
        except Exception as exc:  # noqa: BLE001
            self._failed(exc, fail_open)  # raises unless fail_open
            return []
        corrupt: list[str] = []
        matches = to_matches(group, picked, raws, now, corrupt)
        if self._note_corrupt(corrupt):
            try:
                yield call(self.backend, "discard_results", user, corrupt)
            except Exception:  # noqa: BLE001 - best effort: the entry stays a miss until it expires
                pass
        return self.metrics.lookup(matches)

    def retrieve(
        self,
        user_id: str,
        intention: str,
        *,
        tool: str | None = None,
        args: object = None,
        exact_only: bool = False,
        fail_open: bool = True,
    ) -> IntentionMatch | None:
        """The most recent memory of ``user_id`` under the intention that answers ``intention``, or ``None``.

        Which stored intention answers is decided as the module docstring says; an intention can hold several
        memories (one per tool call), and this returns the most recent of them (see `retrieve_all` for all).

        Args:
            tool: only memories of this tool (``None``: any).
            args: only memories with these arguments (a JSON value compared as canonical JSON; ``None``: any).
            exact_only: only an exact match (no similar match, whatever the threshold).
            fail_open: when True (default) a backend failure is a miss (logged); when False it raises
                `IntentionBackendError`.

        Raises:
            TypeError / ValueError: what `store` raises for the same ``user_id``, ``intention``, ``tool`` and
                ``args`` (a bad value is an error, not a miss).
        """
        matches = run(self._lookup(user_id, intention, tool, args, exact_only, fail_open, first=True))
        return matches[0] if matches else None

    async def aretrieve(
        self,
        user_id: str,
        intention: str,
        *,
        tool: str | None = None,
        args: object = None,
        exact_only: bool = False,
        fail_open: bool = True,
    ) -> IntentionMatch | None:
        """Async `retrieve`."""
        matches = await arun(self._lookup(user_id, intention, tool, args, exact_only, fail_open, first=True))
        return matches[0] if matches else None

    def retrieve_all(
        self,
        user_id: str,
        intention: str,
        *,
        tool: str | None = None,
        args: object = None,
        exact_only: bool = False,
        fail_open: bool = True,
    ) -> list[IntentionMatch]:
        """Every memory stored under the intention that answers ``intention``, most recent first (``[]``: none).

        The same stored intention `retrieve` picks, with all its memories (one per tool call), their results
        fetched in one backend call. All matches share ``kind`` and ``similarity``. Arguments and errors as
        `retrieve` (a backend failure is ``[]`` when ``fail_open``).
        """
        return run(self._lookup(user_id, intention, tool, args, exact_only, fail_open, first=False))

    async def aretrieve_all(
        self,
        user_id: str,
        intention: str,
        *,
        tool: str | None = None,
        args: object = None,
        exact_only: bool = False,
        fail_open: bool = True,
    ) -> list[IntentionMatch]:
        """Async `retrieve_all`."""
        return await arun(self._lookup(user_id, intention, tool, args, exact_only, fail_open, first=False))

    def suggest(self, user_id: str, intention: str, *, count: int = DEFAULT_SUGGESTIONS) -> list[IntentionMatch]:
        """The best few earlier results for ``intention``, for a model to judge (the ``retrieve_memory`` contract):
        an exact match first, then the most similar stored intentions, each with its similarity, age and, when a
        veto fired, the difference found (``note``: e.g. ``"differs in numbers"``). ``kind`` is ``"exact"``,
        ``"similar"`` (no veto fired) or ``"partial"`` (a veto fired: it may still help); ``refused_by`` names the
        check that keeps `retrieve` from serving it (``""``: the one it serves; `IntentionMatch`). One memory (the
        newest) per stored intention. Needs embeddings; without them, the match `retrieve` finds (if any).

        Args:
            count: most results (an int >= 1, default `DEFAULT_SUGGESTIONS`).

        Raises:
            TypeError / ValueError: as `retrieve`; a bad ``count``.
            IntentionBackendError: the backend failed.
        """
        user = check_suggest(user_id, intention, count)
        if not self.recall:
            found = self.retrieve(user, intention, fail_open=False)
            return [] if found is None else [found]
        return run(self._suggest_steps(user, intention, count))

    def _suggest_steps(self, user: str, intention: str, count: int) -> Steps[list[IntentionMatch]]:
        try:
            proposals, now = yield from suggest(self, user, intention, count)
            raws = yield call(self.backend, "results", user, [p.group[0].result_hash for p in proposals])
        except Exception as exc:  # noqa: BLE001
            self._failed(exc, False)
            return []
        return self.metrics.lookup(suggested(proposals, raws, now))

    async def asuggest(self, user_id: str, intention: str, *, count: int = DEFAULT_SUGGESTIONS) -> list[IntentionMatch]:
        """Async `suggest`."""
        user = check_suggest(user_id, intention, count)
        if not self.recall:
            found = await self.aretrieve(user, intention, fail_open=False)
            return [] if found is None else [found]
        return await arun(self._suggest_steps(user, intention, count))

    def forget(self, user_id: str) -> int:
        """Remove every memory of ``user_id``; returns how many were removed.

        Raises:
            IntentionBackendError: the backend failed (a deliberate delete must not fail silently).
        """
        user = check_user(user_id)
        self.indexes.forget(user)
        return self.backend.forget(user)

    async def aforget(self, user_id: str) -> int:
        """Async `forget`."""
        user = check_user(user_id)
        self.indexes.forget(user)
        return await self.backend.aforget(user)

    # -- matching ----------------------------------------------------------------------------------------------
    def _failed(self, exc: Exception, fail_open: bool) -> None:
        self.metrics.error()
        self.metrics.miss()
        self._warning.warn("promptcache: intention memory lookup failed; treating as a miss", exc=exc)
        if fail_open:
            return
        if isinstance(exc, IntentionBackendError):
            raise exc
        raise IntentionBackendError(f"intention memory lookup failed: {type(exc).__name__}: {exc}") from exc

    def _note_corrupt(self, result_hashes: list[str]) -> bool:
        # An unreadable stored result is a miss (logged); it is dropped so the next store of it writes it again.
        if result_hashes:
            self.metrics.error()
            self._warning.warn(
                "promptcache: ignoring %d corrupt intention result(s); treating as a miss", len(result_hashes)
            )
        return bool(result_hashes)

    def __repr__(self) -> str:
        return (
            f"IntentionMemory(backend={type(self.backend).__name__}, ttl_s={self.ttl_s}, "
            f"similarity={self.similarity!r}, threshold={self.threshold}, margin={self.margin}, "
            f"verifier={self.verifier!r})"
        )

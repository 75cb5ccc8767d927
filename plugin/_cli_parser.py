"""The argument parser of the ``promptcache`` command (`build_parser`) and its one-line error style (`fail`).

Building the parser imports nothing of the replay, the plugins or LangChain: the values its help shows (priced
models, strategy names, defaults) are filled in by `_HelpFormatter` only when a help text is printed, so parsing
the arguments of a run costs no import.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any, NoReturn

__all__ = [
    "DEFAULT_MODEL",
    "GAP_DEFAULT_S",
    "RESPONSE_CACHE_TTL_DEFAULT_S",
    "STRATEGY_NAMES",
    "build_parser",
    "fail",
]

DEFAULT_MODEL = "anthropic.claude-sonnet-4-20250514-v1:0"
"""The model every call is priced and cached as when the log names none and ``--model`` is not given."""


def fail(message: str) -> int:
    """Print ``promptcache: error: MESSAGE`` (whitespace collapsed to one line) on stderr; return exit code 2."""
    print(f"promptcache: error: {' '.join(message.split())}", file=sys.stderr)
    return 2


class _Parser(argparse.ArgumentParser):
    """``argparse`` with the command's error style: one line on stderr, exit code 2 (not a usage block), and
    option values such as ``-1`` or ``-inf`` read as numbers (argparse would take ``-inf`` for an option)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # argparse's own pattern only knows -1 and -.5; no option of ours looks like a number
        self._negative_number_matcher = re.compile(r"^-(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$|^-(inf|infinity|nan)$", re.I)

    def error(self, message: str) -> NoReturn:
        sys.exit(fail(f"{message} (see {self.prog} --help)"))


class _Spelled(argparse.Action):
    """Store the value and, in ``<dest>_option``, the spelling the user typed (an error then names that one)."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: str | None = None
    ) -> None:
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_option", option)


def _path(text: str) -> str:
    """An ``argparse`` type for path arguments: the text as given, but not ``""``, which ``Path`` reads as the current
    directory (``promptcache replay ""`` would replay every JSONL file found there)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path '' is not allowed (it would mean the current directory)")
    return text


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (sub-commands ``replay`` and ``calibrate-intentions``).

    Building it imports nothing of the replay, the plugins or LangChain: the values the help shows (priced models,
    strategy names, defaults) are filled in by `_HelpFormatter` only when a help text is printed, so parsing the
    arguments of a run costs no import (the run's own checks come first, `_run_replay`)."""
    from promptcache import __version__

    parser = _Parser(prog="promptcache", description="promptcache command-line tools")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    replay = sub.add_parser(
        "replay",
        help="what would the plugins save on recorded conversations?",
        description="Replay recorded agent traffic offline through a Bedrock prompt-cache simulator: what "
        "to do about caching (keep, switch placement, use the 1-hour TTL, leave it off) and what it saves per "
        "month, why the cache missed, and what the ResponseCache and the intention cache (IntentionMemory) "
        "would have answered. Input formats: OpenAI chat, Anthropic Messages and LangChain message transcripts "
        "(JSON or JSONL, e.g. tau-bench trajectories); Claude Code session logs (<session>.jsonl, or the "
        "<session>/ folder to include its sub-agents and compaction call); Amazon Bedrock model invocation "
        "logs (JSONL or JSON, gzip accepted, as Bedrock writes them to S3); Claude Code project folders (every "
        "session in them); Claude Code stream-json output; LangSmith run exports; Langfuse observation exports; "
        "OpenTelemetry GenAI spans (OTLP JSON); OpenAI request/response logs as proxies write them (LiteLLM, "
        "Helicone); Anthropic Message Batches results; TrafficRecorder files. Prints the "
        "decision and a table; writes DIR/replay.json and DIR/replay.png.",
        formatter_class=_HelpFormatter,
    )
    replay.add_argument(
        "files",
        nargs="+",
        type=_path,
        metavar="FILE",
        help="transcripts (.json / .jsonl / .json.gz), Claude Code session logs, session or project folders, Bedrock "
        "invocation logs, call logs (LangSmith, Langfuse, OpenTelemetry, proxies, batches) or TrafficRecorder files",
    )
    replay.add_argument(
        "--model",
        default=None,
        help="price and cache every call as this model (Bedrock id, regional prefixes and ARNs resolve, or "
        "Anthropic API id such as claude-opus-4-6); default: each call's own model where the log names it, "
        f"else {DEFAULT_MODEL}; priced: {{priced}}",
    )
    replay.add_argument(
        "--min-tokens",
        type=int,
        default=None,
        metavar="N",
        help="minimum tokens per cache point for every model (overrides the model table)",
    )
    replay.add_argument(
        "--models",
        default=None,
        type=_path,
        metavar="FILE",
        help="JSON or TOML file of model-table overrides or models of your own, e.g. "
        '{"my.model-v1": {"family": "claude", "min_tokens": 1024, "max_points": 4, "ttls": ["5m","1h"], '
        '"cachable": ["system","messages","tools"], "input": 3.0, "output": 15.0, "cache_write_5m": 3.75, '
        '"cache_write_1h": 6.0, "cache_read": 0.3}} (every field optional; prices USD per 1M tokens, all four '
        "input-side prices needed for a model not in the tables)",
    )
    replay.add_argument(
        "--tokens",
        choices=("claude", "cl100k"),
        default=None,
        help="token estimate where the log records no usage: calibrated for Claude (default for Claude "
        "models) or plain cl100k_base",
    )
    replay.add_argument(
        "--strategy",
        action="append",
        metavar="NAME",
        dest="strategies",
        help="a strategy to compare, among {strategies}; repeat the option for several "
        "(--strategy a --strategy b; default: all). 'none' is always included, and with anchored-tail the "
        "row anchored-tail+response-cache too",
    )
    replay.add_argument(
        "--gap-s",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds between requests without recorded timestamps, at most a year (default {gap_default})",
    )
    replay.add_argument(
        "--out",
        default="promptcache-replay",
        type=_path,
        metavar="DIR",
        help="directory for replay.json and replay.png (default ./promptcache-replay)",
    )
    replay.add_argument(
        "--response-cache-ttl-s",
        "--response-cache-ttl",
        dest="response_cache_ttl",
        action=_Spelled,
        type=float,
        default=None,
        metavar="SECONDS",
        help="lifetime of a ResponseCache entry, for its hits and the combined row (default: the "
        "ResponseCache default, {rc_default} s)",
    )
    replay.add_argument(
        "--monthly-requests",
        type=int,
        default=None,
        metavar="N",
        help="the team's requests per month, for the decision's monthly saving (default: the log's own rate, "
        "extrapolated from its time span to 30 days when the log spans at least an hour)",
    )
    replay.add_argument("--no-chart", action="store_true", help="skip the PNG chart")
    replay.add_argument(
        "--strict",
        action="store_true",
        help="stop (exit 2) at the first JSONL line that is not valid JSON; by default such lines are skipped, "
        "counted in replay.json (skipped_lines) and named in one warning",
    )
    _add_calibrate(sub)
    return parser


def _add_calibrate(sub: argparse._SubParsersAction[_Parser]) -> None:
    """The ``calibrate-intentions`` sub-command (run by `promptcache.intention._calibrate_cli.run`)."""
    p = sub.add_parser(
        "calibrate-intentions",
        help="precision and hit rate of the intention cache per threshold on labelled pairs",
        description='Each line of PAIRS.jsonl is {"stored": "...", "asked": "...", "same": true|false, '
        '"source": "..."}. The pairs are embedded with local_embeddings() (--model-dir for another copy of the '
        "model), judged as a lookup judges them, and the table gives, per threshold, precision, hit rate, "
        "accepted and wrong counts, overall and per source; then the threshold "
        "IntentionMemory(max_error=...).calibrate(PAIRS.jsonl) picks on these pairs, with its held-out figures. "
        "A row's threshold is what IntentionMemory(embeddings=local_embeddings(), threshold=...) accepts with each "
        "pair's stored intention as its only memory: 1.00 is exact only.",
    )
    p.add_argument("pairs", metavar="PAIRS.jsonl", type=_path, help="labelled pairs, one JSON object per line")
    p.add_argument("--max-error", type=float, default=0.01, help="wrong-hit bound to pick a threshold for")
    p.add_argument(
        "--model-dir", type=_path, default=None, help="folder of the all-MiniLM-L6-v2 files (default: installed)"
    )


class _HelpFormatter(argparse.HelpFormatter):
    """Fills in ``{priced}``, ``{strategies}``, ``{gap_default}`` and ``{rc_default}`` only when the help is
    shown: the price table is imported then (it is small); the strategy names and the defaults are this module's
    copies (``STRATEGY_NAMES``, ...), so the help loads neither the placement code nor the ResponseCache."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = super()._get_help_string(action)
        if not text:
            return text
        for key, value in _HELP_VALUES.items():
            if "{" + key + "}" in text:
                text = text.replace("{" + key + "}", value())
        return text


def _priced() -> str:
    from promptcache._pricing import KNOWN_PRICES

    return ", ".join(sorted(KNOWN_PRICES))


#: The strategies the replay ships, as the help lists them: the keys of ``promptcache.replay._registry.STRATEGIES``
#: (kept equal by tests/cli/test_replay_help_is_fast.py), written out so that ``--help`` does not load the
#: placement code to print their names.
STRATEGY_NAMES = ("none", "last-message", "langchain-aws", "multi-point", "anchored-tail", "as-logged", "hindsight")
#: ``promptcache.replay._engine.DEFAULT_GAP_S`` (seconds), for the help; equal by the same test.
GAP_DEFAULT_S = 10.0
#: ``promptcache.response_cache.DEFAULT_RESPONSE_CACHE_TTL_SECONDS``, for the help (the ResponseCache loads
#: LangChain); equal by the same test.
RESPONSE_CACHE_TTL_DEFAULT_S = 300


def _strategy_names() -> str:
    return ", ".join(STRATEGY_NAMES)


def _gap_default() -> str:
    return f"{GAP_DEFAULT_S:g}"


def _rc_default() -> str:
    return f"{RESPONSE_CACHE_TTL_DEFAULT_S:g}"


_HELP_VALUES = {
    "priced": _priced,
    "strategies": _strategy_names,
    "gap_default": _gap_default,
    "rc_default": _rc_default,
}

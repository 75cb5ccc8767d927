"""``import promptcache`` stays light, and an optional part imported without its extra names the ``pip install``.

Each check runs in a fresh interpreter (``sys.modules`` of the test process already holds everything). Optional
packages are made absent with an import hook that refuses them, as an environment without the extra would.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

_BLOCK = textwrap.dedent(
    """
    import importlib.abc, sys

    class _Absent(importlib.abc.MetaPathFinder):
        names = {"redis", "hiredis", "rich", "matplotlib", "langchain_aws", "boto3", "botocore", "psycopg"}

        def find_spec(self, fullname, path=None, target=None):
            if fullname.split(".")[0] in self.names:
                raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
            return None

    sys.meta_path.insert(0, _Absent())
    """
)


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_loads_no_replay_redis_or_matplotlib() -> None:
    # rich is left out here: httpx (under langgraph) imports it when it is installed; without it the core still
    # imports (test_core_works_without_any_extra blocks rich too).
    out = _run(
        "import sys, promptcache\n"
        "from promptcache import ResponseCache, TypedMemoryStore, IntentionMemory, Processor, AnchoredTailStrategy\n"
        "heavy = ('promptcache.replay', 'promptcache._cli', 'matplotlib', 'redis', 'langchain_aws', 'boto3')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    assert out == "[]"


def test_core_works_without_any_extra() -> None:
    out = _run(
        _BLOCK + "from promptcache import InMemoryServerCache, ResponseCache\n"
        "from promptcache.memory import TypedMemoryStore\n"
        "from langgraph.store.memory import InMemoryStore\n"
        "store = TypedMemoryStore(InMemoryStore())\n"
        "store.put('u1', 'feedback', 'Answer briefly.')\n"
        "print(ResponseCache(InMemoryServerCache()).__class__.__name__, [m.content for m in store.list('u1', 'feedback')])"
    )
    assert out == "ResponseCache ['Answer briefly.']"


def test_missing_extras_name_their_pip_install() -> None:
    out = _run(
        _BLOCK + "from promptcache import PromptCacheError\n"
        "for module in ('promptcache.integrations.redis', 'promptcache.integrations.bedrock'):\n"
        "    try:\n"
        "        __import__(module)\n"
        "    except ImportError as exc:\n"
        "        print(isinstance(exc, PromptCacheError), exc)\n"
    )
    assert out.splitlines() == [
        "True promptcache.integrations.redis (RedisCache, RedisIntentionBackend) needs the 'redis' package, which is"
        ' not installed: pip install "promptcache[redis]"',
        "True promptcache.integrations.bedrock (CachePointChatBedrockConverse, BedrockCachePoints) needs the"
        " 'langchain_aws' package, which is not installed: pip install \"promptcache[bedrock]\"",
    ]


def test_replay_command_without_its_extra_says_which_to_install() -> None:
    code = _BLOCK + (
        "import contextlib, io\n"
        "from promptcache._cli import main\n"
        "err = io.StringIO()\n"
        "with contextlib.redirect_stderr(err):\n"
        "    rc = main(['replay', 'examples/data/sample_conversations.json'])\n"
        "print(rc, err.getvalue().strip())"
    )
    out = _run(code)
    assert out == (
        "2 promptcache: error: the promptcache replay command (terminal table and chart) needs the 'matplotlib' package,"
        ' which is not installed: pip install "promptcache[replay]"'
    )

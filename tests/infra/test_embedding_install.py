"""The embedding model is installed with ``--no-deps`` (Makefile, Dockerfile): its
sentence-transformers requirement would bring torch, on Linux a CUDA build of several GB, which
the ONNX Runtime encoder of ``infra.embedding`` never uses. This keeps that install honest."""

from __future__ import annotations

import importlib.metadata
import importlib.util

from skills_app.infra import embedding


def test_the_model_package_is_installed() -> None:
    assert importlib.metadata.version(embedding.MODEL_PACKAGE)


def test_no_torch_and_no_cuda_libraries_are_installed() -> None:
    assert importlib.util.find_spec("torch") is None
    names = sorted(
        (dist.metadata["Name"] or "").lower() for dist in importlib.metadata.distributions()
    )
    assert [n for n in names if n.startswith("nvidia-") or n in ("torch", "triton")] == []
    assert "sentence-transformers" not in names

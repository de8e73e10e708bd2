"""The embedding model is one of the project's own dependencies (pyproject.toml), and nothing
it brings is torch: on Linux the registry's torch is a CUDA build of several GB, which the ONNX
Runtime encoder of ``encoder.embedding`` never uses. ``tests/e2e/test_fresh_install.py`` installs
the project into a new environment and searches by meaning there."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import re
import tomllib

from skills_app.encoder import embedding
from tests.e2e.processes import ROOT


def test_the_model_package_is_installed() -> None:
    assert importlib.metadata.version(embedding.MODEL_PACKAGE)
    assert embedding.TOKENIZER.is_file()


def test_the_model_is_a_bounded_dependency_of_the_project() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = [d for d in project["dependencies"] if d.startswith(embedding.MODEL_PACKAGE)]
    assert len(wanted) == 1
    assert re.fullmatch(rf"{embedding.MODEL_PACKAGE}>=[\d.]+,<[\d.]+", wanted[0])
    # and it asks for nothing itself (its wheel is the ONNX file and a model_path function)
    assert importlib.metadata.requires(embedding.MODEL_PACKAGE) is None


def test_no_torch_and_no_cuda_libraries_are_installed() -> None:
    assert importlib.util.find_spec("torch") is None
    names = sorted(
        (dist.metadata["Name"] or "").lower() for dist in importlib.metadata.distributions()
    )
    assert [n for n in names if n.startswith("nvidia-") or n in ("torch", "triton")] == []
    assert "sentence-transformers" not in names

"""The bridge's hash vectors are the server's: clients/xmemo-skill/test/vectors.json, which the
Node tests check the bridge's canonical JSON and hash against, must be what the server's own
``canonical_hash`` and wire encoder make of the same inputs today. A change on either side
fails one of the two suites until the vectors are written again (make_vectors.py)."""

from __future__ import annotations

import importlib.util
import json
from types import ModuleType

from skills_app.domain.canonical import canonical_hash
from tests.support import ROOT

VECTORS = ROOT / "clients" / "xmemo-skill" / "test" / "vectors.json"


def _make_vectors() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_vectors", VECTORS.with_name("make_vectors.py")
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_vectors_file_is_what_the_server_writes_today() -> None:
    assert VECTORS.read_text(encoding="utf-8") == _make_vectors().render(), (
        "run: python clients/xmemo-skill/test/make_vectors.py"
    )


def test_each_documents_wire_hashes_to_its_vector_on_the_server() -> None:
    """What the bridge reads (the wire JSON) hashed by the server's function, as the Node test
    hashes it with the bridge's."""
    documents = json.loads(VECTORS.read_text(encoding="utf-8"))["documents"]
    assert documents
    for vector in documents:
        doc = json.loads(vector["wire"])
        doc["components"] = [tuple(c) for c in doc["components"]]
        assert canonical_hash(**doc) == vector["canonical_hash"]


def test_each_value_is_canonical_as_the_server_writes_it() -> None:
    for vector in json.loads(VECTORS.read_text(encoding="utf-8"))["values"]:
        value = json.loads(vector["wire"])
        canonical = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert canonical == vector["canonical"], vector["wire"]

"""Writes vectors.json: values as the server sends them (domain.json_bytes.encode_json) and as
Python's canonical JSON writes them (json.dumps(sort_keys=True, separators=(",", ":"),
ensure_ascii=False), SPEC §3), plus canonical hashes. The Node tests read them back.

Run from the repository root: python clients/xmemo-skill/test/make_vectors.py
(tests/test_bridge_vectors.py fails while vectors.json differs from what it writes).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skills_app.domain.canonical import canonical_hash
from skills_app.domain.json_bytes import encode_json

VALUES: list[Any] = [
    None,
    True,
    0,
    -7,
    2**63 + 1,
    1.0,
    -0.0,
    0.1,
    1.5e-7,
    1e-5,
    0.0001,
    123456789012345.6,
    1e15,
    1e16,
    1.7976931348623157e308,
    5e-324,
    "",
    "plain",
    'quote " backslash \\ slash /',
    "\n\r\t\b\f\x00\x01\x1f\x7f",
    "é ü 日本 😀 \u2028\u2029 \ufeff",
    ["a", 1, 2.5, [], {}],
    {"b": 1, "a": 2, "A": 3, "é": 4, "😀": 5, "\uffff": 6, "aa": 7, "": 8},
    {"nested": {"z": [1, {"y": None, "x": False}], "m": "\u00e9"}},
]

DOCUMENTS: list[dict[str, Any]] = [
    {
        "name": "Deploy runbook",
        "description": "How to deploy. Use when shipping.",
        "frontmatter": {"license": "MIT", "metadata": {"version": 1.0, "tags": ["a", "b"]}},
        "instruction_body": "# Deploy\n\nStep one — café.\n",
        "components": [
            ("templates/t.md", "template", "ab" * 32),
            ("assets/x.bin", "artifact", "cd" * 32),
            ("Z.md", "document", "ef" * 32),
        ],
    },
    {
        "name": "x",
        "description": "y",
        "frontmatter": {},
        "instruction_body": "",
        "components": [],
    },
]


def vectors() -> dict[str, list[dict[str, str]]]:
    """The vectors from the server's own code, as vectors.json holds them."""
    return {
        "values": [
            {
                "wire": encode_json(value).decode("utf-8"),
                "canonical": json.dumps(
                    value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
                ),
            }
            for value in VALUES
        ],
        "documents": [
            {
                "wire": encode_json(
                    {**doc, "components": [list(c) for c in doc["components"]]}
                ).decode("utf-8"),
                "canonical_hash": canonical_hash(**doc),
            }
            for doc in DOCUMENTS
        ],
    }


def render() -> str:
    return json.dumps(vectors(), indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    Path(__file__).with_name("vectors.json").write_text(render(), encoding="utf-8")


if __name__ == "__main__":
    main()

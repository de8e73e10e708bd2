"""The one JSON encoding of every answer REST and MCP send (contract §12: byte for byte alike).

Compact separators and UTF-8 text as is (no ``\\uXXXX`` escapes), so the same document is the
same bytes through every door, and an answer's ETag (a digest of those bytes) is stable.
"""

from __future__ import annotations

import json
from typing import Any


def encode_json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

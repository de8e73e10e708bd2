"""The values a scan produces: one finding, the text it points into, the verdict."""

from __future__ import annotations

import bisect
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

SEVERITIES = ("info", "low", "medium", "high", "critical")
CATEGORIES = (
    "prompt_injection",
    "hidden_text",
    "exfiltration",
    "dangerous_command",
    "obfuscation",
    "capability_mismatch",
    "secret",
)
VERDICTS = ("pending", "clean", "warn", "block")
EXCERPT_CHARS = 160


@dataclass(frozen=True)
class Finding:
    """One finding (docs/contract.md §21); ``live`` marks a secret push protection refuses."""

    rule_id: str
    severity: str
    category: str
    path: str
    line: int
    excerpt: str
    message: str
    live: bool = field(default=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["live"]
        return data


@dataclass(frozen=True)
class Text:
    """One scanned file: ``path`` as findings name it, ``body`` its text, ``kind`` what it is
    (``skill_md``, ``prose`` for Markdown and plain text, ``code`` for scripts and sources)."""

    path: str
    body: str
    kind: str
    is_script: bool = False

    @cached_property
    def _starts(self) -> list[int]:
        starts = [0]
        starts.extend(i + 1 for i, ch in enumerate(self.body) if ch == "\n")
        return starts

    def line_of(self, offset: int) -> int:
        """The 1-based line holding character ``offset``."""
        return bisect.bisect_right(self._starts, offset)

    def line_text(self, line: int) -> str:
        starts = self._starts
        begin = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.body)
        return self.body[begin:end]


def visible(text: str) -> str:
    """``text`` with invisible and control characters spelled out (``\\u202e``), cut short."""
    out = []
    for ch in text.strip():
        code = ord(ch)
        if ch == "\t" or (32 <= code < 127) or (code > 159 and not _invisible(code)):
            out.append(ch)
        else:
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    joined = "".join(out)
    return joined if len(joined) <= EXCERPT_CHARS else joined[: EXCERPT_CHARS - 1] + "…"


def _invisible(code: int) -> bool:
    return (
        0x200B <= code <= 0x200F
        or 0x202A <= code <= 0x202E
        or 0x2060 <= code <= 0x2069
        or code in (0xFEFF, 0x180E, 0x00AD)
        or 0xE0000 <= code <= 0xE007F
    )


def mask(line: str, secret: str) -> str:
    """The line with ``secret`` hidden but for its first four characters."""
    shown = secret[:4] + "***" if len(secret) > 8 else "***"
    return visible(line.replace(secret, shown)) if secret else visible(line)


def verdict_of(findings: list[Finding]) -> str:
    """``block`` on any high or critical finding, ``warn`` on any low or medium, else clean."""
    severities = {f.severity for f in findings}
    if severities & {"high", "critical"}:
        return "block"
    if severities & {"low", "medium"}:
        return "warn"
    return "clean"

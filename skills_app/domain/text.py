"""Whether text can be stored at all (docs/contract.md §3): valid Unicode, no NUL.

PostgreSQL text and JSON cannot hold NUL, and a lone surrogate (``"\\ud800"``, which JSON and
YAML escapes can produce) cannot be encoded as UTF-8 anywhere. Both are refused up front, naming
the field, instead of failing in the database or in the JSON encoder of the error answer.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

# What a name (docs/contract.md §16b) may not hold: controls (CR, LF, tab, ESC, DEL, C1 such as
# NEL) and the Unicode line and paragraph separators. A name travels into one-line places (mail
# subjects, where Django refuses CR/LF and the mail is lost; log lines; HTTP headers).
_LINE_BREAKING_CATEGORIES = ("Cc", "Zl", "Zp")


def unstorable_reason(text: str) -> str | None:
    """Why ``text`` cannot be stored, or None when it can."""
    if "\x00" in text:
        return "holds a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "holds text that is not valid Unicode (a lone surrogate)"
    return None


def control_character_reason(text: str) -> str | None:
    """Why ``text`` cannot be a name (docs/contract.md §16b), or None: it holds a control
    character, or an invisible or bidirectional formatting one (Unicode Cf: U+202E, which shows
    ``txt.exe`` as ``exe.txt``, zero-width spaces and joiners, U+FEFF), which makes a name read
    as something it is not."""
    for ch in text:
        category = unicodedata.category(ch)
        if category in _LINE_BREAKING_CATEGORIES:
            return f"holds a control character (U+{ord(ch):04X})"
        if category == "Cf":
            return f"holds an invisible or bidirectional formatting character (U+{ord(ch):04X})"
    return None


def one_line(text: str) -> str:
    """``text`` with every run of control characters made one space: for a mail subject, which
    Django refuses outright when it holds CR or LF (names stored before the rule may)."""
    out: list[str] = []
    for ch in text:
        if unicodedata.category(ch) in _LINE_BREAKING_CATEGORIES:
            if out and out[-1] != " ":
                out.append(" ")
        else:
            out.append(ch)
    return "".join(out).strip()


def printable(text: str) -> str:
    """``text`` made safe to quote in an error answer: invalid code points as escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def unstorable_field(value: Any, field: str) -> tuple[str, str] | None:
    """The first (field path, reason) of a JSON-like ``value`` holding unstorable text in a
    string or a key, or None. Paths read like ``components[0].logical_path``."""
    if isinstance(value, str):
        reason = unstorable_reason(value)
        return (field, reason) if reason else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            name = f"{field}.{printable(str(key))}" if field else printable(str(key))
            if isinstance(key, str):
                reason = unstorable_reason(key)
                if reason:
                    return name, f"has a key that {reason}"
            problem = unstorable_field(item, name)
            if problem:
                return problem
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            problem = unstorable_field(item, f"{field}[{index}]")
            if problem:
                return problem
    return None

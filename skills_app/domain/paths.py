"""Component logical paths (docs/contract.md §3) and the media type a component is served with.

A logical path is where a component lives inside a skill directory and inside a Source Capsule
ZIP, so the rules here are the ones that keep an export extractable on every operating system:
relative POSIX, no traversal, no names that clash on a case-insensitive file system, and no
path that is both a file and a folder.
"""

from __future__ import annotations

import mimetypes
import re
import unicodedata
from collections.abc import Iterable

from skills_app.domain.text import printable
from skills_app.errors import InvalidPath, ValidationFailed

MAX_PATH_LENGTH = 255
MAX_MEDIA_TYPE_LENGTH = 127

# RFC 6838 restricted names for type and subtype, and RFC 9110 parameters (token or quoted
# string): no whitespace but single spaces/tabs around ';', no CR/LF, ASCII only, since the
# value goes verbatim into a Content-Type header.
_RESTRICTED_NAME = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}"
_TOKEN = r"[A-Za-z0-9!#$%&'*+.^_`|~-]+"
_QUOTED = r'"(?:[\t !#-\[\]-~]|\\[\t !-~])*"'
_MEDIA_TYPE = re.compile(
    rf"{_RESTRICTED_NAME}/{_RESTRICTED_NAME}(?:[ \t]*;[ \t]*{_TOKEN}=(?:{_TOKEN}|{_QUOTED}))*",
    re.ASCII,
)

# Unicode categories refused in a path: controls (Cc), format characters (Cf: bidirectional
# overrides and isolates, zero-width spaces and joiners, the BOM), lone surrogates (Cs) and line
# and paragraph separators. Each can make two paths look alike or a path render misleadingly.
_REFUSED_CATEGORIES = {
    "Cc": "a control",
    "Cf": "an invisible or bidirectional",
    "Cs": "a lone surrogate",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}

# Names a capsule ZIP holds at its root besides the components; a component there would clash.
# Compared case-insensitively, like every other path collision.
RESERVED_ROOT_NAMES = ("SKILL.md", "capsule.json")

# Types Python's built-in table lacks or gets wrong for skill files. The built-in table is used
# without reading /etc/mime.types, so the same file gets the same type on every machine.
_MEDIA_TYPES_BY_SUFFIX = {
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
}
_BUILTIN_MIME_TYPES = mimetypes.MimeTypes()
# ``mimetypes`` reports "x.tar.gz" as a tar with gzip *encoding*; the bytes are the gzip.
_COMPRESSED_MEDIA_TYPES = {
    "gzip": "application/gzip",
    "bzip2": "application/x-bzip2",
    "xz": "application/x-xz",
    "br": "application/x-brotli",
    "compress": "application/x-compress",
}


def _invalid(path: str, reason: str) -> InvalidPath:
    return InvalidPath(
        f"Component path {path!r} is invalid: {reason}.", details={"path": path, "reason": reason}
    )


def validate_logical_path(path: str) -> str:
    """Return ``path`` unchanged if it is an acceptable logical path, else raise InvalidPath."""
    if not isinstance(path, str) or path == "":
        raise _invalid(str(path), "it must be a non-empty string")
    if len(path) > MAX_PATH_LENGTH:
        raise _invalid(path, f"it is longer than {MAX_PATH_LENGTH} characters")
    if "\\" in path:
        raise _invalid(path, "use '/' as the separator, not '\\'")
    for ch in path:
        kind = _REFUSED_CATEGORIES.get(unicodedata.category(ch))
        if kind:
            raise _invalid(path, f"it contains {kind} character (U+{ord(ch):04X})")
    if unicodedata.normalize("NFC", path) != path:
        raise _invalid(path, "it is not in Unicode normalization form NFC")
    if path.startswith("/"):
        raise _invalid(path, "it must be relative, not start with '/'")
    for segment in path.split("/"):
        if segment == "":
            raise _invalid(path, "it has an empty segment ('//' or a trailing '/')")
        if segment in (".", ".."):
            raise _invalid(path, f"it contains a {segment!r} segment")
    if any(path.casefold() == name.casefold() for name in RESERVED_ROOT_NAMES):
        raise _invalid(path, f"{path!r} at the root is reserved for the skill itself")
    return path


def nfc_path(path: str) -> str:
    """The stored spelling of a path: Unicode NFC (macOS file systems hand out NFD names)."""
    return unicodedata.normalize("NFC", path) if isinstance(path, str) else path


def _collision_key(path: str) -> str:
    """Equal for paths that differ only by letter case or Unicode normalization (the Unicode
    standard's canonical caseless match)."""
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", path).casefold())


def check_unique_paths(paths: Iterable[str]) -> None:
    """Refuse duplicates, names differing only by case or Unicode normalization, and a path
    used as file and folder."""
    files: dict[str, str] = {}
    for path in paths:
        key = _collision_key(path)
        if key in files:
            other = files[key]
            reason = (
                "it is listed twice"
                if other == path
                else f"it differs from {other!r} only by case or Unicode normalization"
            )
            raise InvalidPath(
                f"Component path {path!r} is invalid: {reason}.",
                details={"path": path, "conflicts_with": other, "reason": reason},
            )
        files[key] = path
    for key, path in files.items():
        parts = key.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder in files:
                reason = f"{files[folder]!r} is a file, so it cannot also be a folder"
                raise InvalidPath(
                    f"Component path {path!r} is invalid: {reason}.",
                    details={"path": path, "conflicts_with": files[folder], "reason": reason},
                )


def validate_media_type(media_type: str, *, path: str) -> str:
    """Return ``media_type`` if it is a ``type/subtype[; name=value]`` of at most 127 ASCII
    characters, else raise ValidationFailed: it is sent as a Content-Type header and stored in
    a 127-character column."""
    if (
        not isinstance(media_type, str)
        or len(media_type) > MAX_MEDIA_TYPE_LENGTH
        or not _MEDIA_TYPE.fullmatch(media_type)
    ):
        shown = printable(media_type[:MAX_MEDIA_TYPE_LENGTH]) if isinstance(media_type, str) else ""
        raise ValidationFailed(
            f"Component {path!r} has the media type {shown!r}; use 'type/subtype' "
            f"(e.g. text/markdown), at most {MAX_MEDIA_TYPE_LENGTH} characters, no line breaks.",
            details={"field": "media_type", "path": path, "limit": MAX_MEDIA_TYPE_LENGTH},
        )
    return media_type


def is_text(content: bytes) -> bool:
    """True when ``content`` is valid UTF-8 without NUL bytes (served and diffed as text)."""
    if b"\x00" in content:
        return False
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def guess_media_type(path: str, content: bytes) -> str:
    """The type a component is served with: by suffix, else text/plain or octet-stream."""
    name = path.rsplit("/", 1)[-1]
    suffix = name[name.rfind(".") :].lower() if "." in name else ""
    if suffix in _MEDIA_TYPES_BY_SUFFIX:
        return _MEDIA_TYPES_BY_SUFFIX[suffix]
    guessed, encoding = _BUILTIN_MIME_TYPES.guess_type(name.lower(), strict=True)
    if encoding:
        return _COMPRESSED_MEDIA_TYPES.get(encoding, "application/octet-stream")
    if guessed:
        return guessed
    return "text/plain" if is_text(content) else "application/octet-stream"

"""Word-level diff between two revisions (docs/contract.md §10), as JSON-ready data.

Texts are cut into word, whitespace and punctuation tokens; each distinct token becomes one
character (diff-match-patch's ``linesToChars`` trick, applied to words), the characters are
diffed and semantically cleaned up, then mapped back. Doing the cleanup on the token string
keeps every edit on token boundaries: a diff never splits a word.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from diff_match_patch import diff_match_patch

from skills_app.domain.bundle import SkillBundle
from skills_app.domain.canonical import sha256_hex
from skills_app.domain.paths import is_text
from skills_app.domain.shapes.diff import (
    DiffChange,
    DiffListing,
    DiffOp,
    RevisionPairDiff,
)
from skills_app.domain.skillmd import frontmatter_yaml

EQUAL = "equal"
INSERT = "insert"
DELETE = "delete"
_OPS = {
    diff_match_patch.DIFF_EQUAL: EQUAL,
    diff_match_patch.DIFF_INSERT: INSERT,
    diff_match_patch.DIFF_DELETE: DELETE,
}

# One time budget for the whole diff of a revision pair (body, name, description, frontmatter
# and every text component together). Past it diff-match-patch stops looking for the minimal
# edit script and answers a valid, coarser one, and the answer says ``truncated``: two shuffled
# 64 KiB bodies cost this much at most, not seconds per text.
DIFF_BUDGET_SECONDS = 0.5

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]+")
_WORD = re.compile(r"\S+")


def _encode(text: str, index: dict[str, int], tokens: list[str]) -> str:
    chars = []
    for token in _TOKEN.findall(text):
        if token not in index:
            index[token] = len(tokens)
            tokens.append(token)
        chars.append(chr(index[token]))
    return "".join(chars)


def word_diff(a: str, b: str) -> list[tuple[str, str]]:
    """``(op, text)`` pairs with op equal/insert/delete, within a budget of its own.

    The equal and delete texts spell ``a``; the equal and insert texts spell ``b``.
    """
    return word_diff_until(a, b, deadline=time.time() + DIFF_BUDGET_SECONDS)[0]


def word_diff_until(a: str, b: str, *, deadline: float) -> tuple[list[tuple[str, str]], bool]:
    """``word_diff``'s pairs, and whether ``deadline`` (a ``time.time()``) cut the search
    short, so that the pairs may be coarser than the minimal diff.

    Lines first, then words: the texts are diffed line by line, and only where lines were
    removed and others put in their place are those lines diffed word by word. So a line that
    did not change is always one equal run, never removed and added again around edits.
    """
    if a != b and time.time() >= deadline:
        # The budget is spent: the coarsest valid diff, without even cutting the texts up.
        return [(op, text) for op, text in ((DELETE, a), (INSERT, b)) if text], True
    pairs: list[tuple[str, str]] = []
    truncated = False
    removed = added = ""
    for op, text in line_diff(a, b, deadline=deadline):
        if op == DELETE:
            removed += text
        elif op == INSERT:
            added += text
        else:
            words, cut = _words_until(removed, added, deadline=deadline)
            pairs += [*words, (EQUAL, text)]
            truncated = truncated or cut
            removed = added = ""
    words, cut = _words_until(removed, added, deadline=deadline)
    return _joined([*pairs, *words]), truncated or cut


def line_diff(a: str, b: str, *, deadline: float) -> list[tuple[str, str]]:
    """``(op, text)`` pairs over whole lines (diff-match-patch's line mode)."""
    dmp = diff_match_patch()
    dmp.Diff_Timeout = DIFF_BUDGET_SECONDS
    chars_a, chars_b, lines = dmp.diff_linesToChars(a, b)
    diffs = dmp.diff_main(chars_a, chars_b, False, deadline)
    dmp.diff_charsToLines(diffs, lines)
    return [(_OPS[op], text) for op, text in diffs if text]


def _joined(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Neighbouring pairs of one op as one."""
    out: list[tuple[str, str]] = []
    for op, text in pairs:
        if out and out[-1][0] == op:
            out[-1] = (op, out[-1][1] + text)
        elif text:
            out.append((op, text))
    return out


def _words_until(a: str, b: str, *, deadline: float) -> tuple[list[tuple[str, str]], bool]:
    """The word-level pairs of ``a`` against ``b`` (lines that replaced each other)."""
    if not a or not b:
        return [(op, text) for op, text in ((DELETE, a), (INSERT, b)) if text], False
    index: dict[str, int] = {}
    tokens: list[str] = []
    chars_a = _encode(a, index, tokens)
    chars_b = _encode(b, index, tokens)
    dmp = diff_match_patch()
    # The deadline passed below bounds the search (Diff_Timeout > 0 also allows the half-match
    # speed-up).
    dmp.Diff_Timeout = DIFF_BUDGET_SECONDS
    diffs = dmp.diff_main(chars_a, chars_b, False, deadline)
    truncated = chars_a != chars_b and time.time() >= deadline
    dmp.diff_cleanupSemantic(diffs)
    pairs = [(_OPS[op], "".join(tokens[ord(ch)] for ch in chars)) for op, chars in diffs if chars]
    return pairs, truncated


@dataclass(frozen=True)
class DiffRow:
    """One line of a diff as a person reads it: its numbers before and after (None where the
    line is not on that side), and its pieces, each ``(op, text)`` without the line break."""

    kind: str  # equal | delete | insert
    old: int | None
    new: int | None
    pieces: tuple[tuple[str, str], ...]


def _side_lines(pairs: list[tuple[str, str]], keep: str) -> list[tuple[tuple[str, str], ...]]:
    """The lines of one side (equal pieces plus ``keep``'s), each as its pieces."""
    lines: list[tuple[tuple[str, str], ...]] = []
    current: list[tuple[str, str]] = []
    for op, text in pairs:
        if op not in (EQUAL, keep):
            continue
        for piece in re.findall(r"[^\n]*\n|[^\n]+", text):
            if piece.rstrip("\n"):
                current.append((op, piece.rstrip("\n")))
            if piece.endswith("\n"):
                lines.append(tuple(current))
                current = []
    return [*lines, tuple(current)] if current else lines


def diff_rows(pairs: list[tuple[str, str]]) -> list[DiffRow]:
    """The lines of a diff's pairs with their line numbers: unchanged lines once, then for each
    changed block the lines as they were (removed words marked) and as they are (added words
    marked). The pairs come from ``word_diff``, so its line diff places the blocks again."""
    old_lines, new_lines = _side_lines(pairs, DELETE), _side_lines(pairs, INSERT)
    old_text = "".join(text for op, text in pairs if op != INSERT)
    new_text = "".join(text for op, text in pairs if op != DELETE)
    rows: list[DiffRow] = []
    old = new = 0
    for op, text in line_diff(old_text, new_text, deadline=time.time() + DIFF_BUDGET_SECONDS):
        for _ in range(len(re.findall(r"[^\n]*\n|[^\n]+", text))):
            if op == EQUAL:
                rows.append(DiffRow(EQUAL, old + 1, new + 1, new_lines[new]))
                old, new = old + 1, new + 1
            elif op == DELETE:
                rows.append(DiffRow(DELETE, old + 1, None, old_lines[old]))
                old += 1
            else:
                rows.append(DiffRow(INSERT, None, new + 1, new_lines[new]))
                new += 1
    return rows


@dataclass(frozen=True)
class ComponentSnapshot:
    type: str
    sha256: str
    size: int
    text: str | None  # None for binary content


@dataclass(frozen=True)
class RevisionSnapshot:
    revision_id: str
    revision_number: int
    name: str
    description: str
    frontmatter: dict[str, Any]
    instruction_body: str
    components: dict[str, ComponentSnapshot]


def snapshot_of(bundle: SkillBundle, *, revision_id: str, number: int) -> RevisionSnapshot:
    """What the diff compares of a skill's content (a stored revision's or unsaved content)."""
    return RevisionSnapshot(
        revision_id=revision_id,
        revision_number=number,
        name=bundle.name,
        description=bundle.description,
        frontmatter=bundle.frontmatter,
        instruction_body=bundle.instruction_body,
        components={
            c.logical_path: ComponentSnapshot(
                type=c.type,
                sha256=sha256_hex(c.content),
                size=len(c.content),
                text=c.content.decode("utf-8") if is_text(c.content) else None,
            )
            for c in bundle.components or ()
        },
    )


def _ops(pairs: list[tuple[str, str]]) -> list[DiffOp]:
    return [{"op": op, "text": text} for op, text in pairs]


class _Stats:
    """Word counts and the one deadline shared by every text of a revision pair."""

    def __init__(self) -> None:
        self.insertions = 0
        self.deletions = 0
        self.deadline = time.time() + DIFF_BUDGET_SECONDS
        self.truncated = False

    def diff(self, a: str, b: str) -> list[DiffOp]:
        pairs, truncated = word_diff_until(a, b, deadline=self.deadline)
        self.truncated = self.truncated or truncated
        for op, text in pairs:
            if op == INSERT:
                self.insertions += len(_WORD.findall(text))
            elif op == DELETE:
                self.deletions += len(_WORD.findall(text))
        return _ops(pairs)

    def diff_if_changed(self, a: str, b: str) -> list[DiffOp] | None:
        return None if a == b else self.diff(a, b)


def _listing(path: str, component: ComponentSnapshot) -> DiffListing:
    return {
        "path": path,
        "type": component.type,
        "size": component.size,
        "sha256": component.sha256,
    }


def diff_snapshots(old: RevisionSnapshot, new: RevisionSnapshot) -> RevisionPairDiff:
    """The diff of docs/contract.md §10. ``name``/``description``/``frontmatter`` are None when
    equal.

    ``frontmatter`` diffs a key-sorted YAML dump. A component is "changed" when its bytes or
    its type differ; its ``diff`` is None when either side is binary or only the type changed.
    ``stats`` counts the words (runs of non-space) inserted and deleted across every diff.
    ``truncated`` says the time budget ran out: some texts got a valid but coarser diff.
    """
    stats = _Stats()
    frontmatter = None
    if old.frontmatter != new.frontmatter:
        frontmatter = stats.diff(
            frontmatter_yaml(old.frontmatter, sort_keys=True),
            frontmatter_yaml(new.frontmatter, sort_keys=True),
        )
    # In this order: the texts share one deadline.
    name = stats.diff_if_changed(old.name, new.name)
    description = stats.diff_if_changed(old.description, new.description)
    body = stats.diff(old.instruction_body, new.instruction_body)

    added = [_listing(p, c) for p, c in sorted(new.components.items()) if p not in old.components]
    removed = [_listing(p, c) for p, c in sorted(old.components.items()) if p not in new.components]
    changed: list[DiffChange] = []
    unchanged: list[str] = []
    for path in sorted(old.components.keys() & new.components.keys()):
        before, after = old.components[path], new.components[path]
        if before.sha256 == after.sha256 and before.type == after.type:
            unchanged.append(path)
            continue
        text_diff = None
        if before.sha256 != after.sha256 and before.text is not None and after.text is not None:
            text_diff = stats.diff(before.text, after.text)
        changed.append(
            {
                "path": path,
                "type": after.type,
                "old_type": before.type,
                "old_sha256": before.sha256,
                "new_sha256": after.sha256,
                "old_size": before.size,
                "new_size": after.size,
                "diff": text_diff,
            }
        )
    return {
        "from": {"revision_id": old.revision_id, "revision_number": old.revision_number},
        "to": {"revision_id": new.revision_id, "revision_number": new.revision_number},
        "name": name,
        "description": description,
        "frontmatter": frontmatter,
        "instruction_body": body,
        "components": {
            "added": added,
            "removed": removed,
            "changed": changed,
            "unchanged": unchanged,
        },
        "stats": {"insertions": stats.insertions, "deletions": stats.deletions},
        "truncated": stats.truncated,
    }

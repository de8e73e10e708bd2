"""Three-way merge of texts: the editor's rebase after a 409 (docs/console.md, *Editor*).

``base`` is the revision the author started from, ``mine`` what they wrote, ``theirs`` the
revision saved meanwhile. diff-match-patch diffs base → mine and base → theirs line by line
(each distinct line one character, its ``linesToChars`` trick); each diff's changes are hunks
over base's lines. Theirs' hunks that touch none of mine are applied onto mine; where a hunk
of each side overlaps (or both insert at one place) and they differ, both sides are kept
between conflict markers and reported. No line of either side is ever dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from diff_match_patch import diff_match_patch

MINE_MARKER = "<<<<<<< your version"
SPLIT_MARKER = "======="
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


@dataclass(frozen=True)
class Hunk:
    """Base's lines ``start:end`` replaced by ``lines`` (an insertion when start == end)."""

    start: int
    end: int
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Overlap:
    """Where both sides changed the same lines differently; ``line`` is 1-based in the result."""

    line: int
    mine: str
    theirs: str


@dataclass(frozen=True)
class Merge:
    text: str
    overlaps: tuple[Overlap, ...]
    applied: int  # how many of theirs' hunks went in cleanly


def split_lines(text: str) -> list[str]:
    """Lines with their ``\\n`` (only ``\\n`` ends a line, unlike ``str.splitlines``)."""
    return _LINE.findall(text)


def _hunks(base: list[str], other: list[str], codes: dict[str, str]) -> list[Hunk]:
    def encode(lines: list[str]) -> str:
        return "".join(codes.setdefault(line, chr(len(codes) + 1)) for line in lines)

    diffs = diff_match_patch().diff_main(encode(base), encode(other), False)
    hunks: list[Hunk] = []
    at = pos = 0  # positions in base and in other
    open_at: int | None = None  # where the hunk being read starts in base
    lines: list[str] = []
    for op, chars in diffs:
        if op == diff_match_patch.DIFF_EQUAL:
            if open_at is not None:
                hunks.append(Hunk(open_at, at, tuple(lines)))
                open_at, lines = None, []
            at, pos = at + len(chars), pos + len(chars)
            continue
        open_at = at if open_at is None else open_at
        if op == diff_match_patch.DIFF_DELETE:
            at += len(chars)
        else:
            lines += other[pos : pos + len(chars)]
            pos += len(chars)
    if open_at is not None:
        hunks.append(Hunk(open_at, at, tuple(lines)))
    return hunks


def _overlaps(lo: int, hi: int, hunk: Hunk) -> bool:
    """Whether ``hunk`` touches the base range ``lo:hi`` (hunks come sorted by start)."""
    return hunk.start < hi or (hunk.start == hi == lo and hunk.start == hunk.end)


def _apply(base: list[str], lo: int, hi: int, hunks: list[Hunk]) -> list[str]:
    out: list[str] = []
    at = lo
    for hunk in hunks:
        out += base[at : hunk.start]
        out += hunk.lines
        at = hunk.end
    return out + base[at:hi]


def _ended(lines: list[str]) -> list[str]:
    return (
        [*lines[:-1], lines[-1] if lines[-1].endswith("\n") else lines[-1] + "\n"] if lines else []
    )


def merge_text(base: str, mine: str, theirs: str, *, theirs_label: str) -> Merge:
    """Theirs' changes since ``base`` applied onto ``mine``; overlapping changes both kept."""
    base_lines, mine_lines, theirs_lines = split_lines(base), split_lines(mine), split_lines(theirs)
    codes: dict[str, str] = {}
    tagged = sorted(
        [(h, True) for h in _hunks(base_lines, mine_lines, codes)]
        + [(h, False) for h in _hunks(base_lines, theirs_lines, codes)],
        key=lambda pair: (pair[0].start, pair[0].end, pair[1]),
    )
    out: list[str] = []
    overlaps: list[Overlap] = []
    applied = 0
    at = 0
    index = 0
    while index < len(tagged):
        first = tagged[index][0]
        lo, hi = first.start, first.end
        cluster = [tagged[index]]
        index += 1
        while index < len(tagged) and _overlaps(lo, hi, tagged[index][0]):
            cluster.append(tagged[index])
            hi = max(hi, tagged[index][0].end)
            index += 1
        out += base_lines[at:lo]
        at = hi
        mine_part = _apply(base_lines, lo, hi, [h for h, is_mine in cluster if is_mine])
        theirs_part = _apply(base_lines, lo, hi, [h for h, is_mine in cluster if not is_mine])
        theirs_hunks = sum(1 for _, is_mine in cluster if not is_mine)
        if not theirs_hunks:
            out += mine_part
        elif len(cluster) == theirs_hunks or mine_part == theirs_part:
            out += theirs_part
            applied += theirs_hunks
        else:
            if out and not out[-1].endswith("\n"):
                out[-1] += "\n"
            overlaps.append(
                Overlap(line=len(out) + 1, mine="".join(mine_part), theirs="".join(theirs_part))
            )
            out += [f"{MINE_MARKER}\n", *_ended(mine_part), f"{SPLIT_MARKER}\n"]
            out += [*_ended(theirs_part), f">>>>>>> {theirs_label}\n"]
    out += base_lines[at:]
    # A side's last line without its newline may now be followed by lines: never glue them.
    text = "".join(line if line.endswith("\n") else line + "\n" for line in out[:-1])
    return Merge(text=text + "".join(out[-1:]), overlaps=tuple(overlaps), applied=applied)


def merge_value(base: str, mine: str, theirs: str) -> tuple[str, bool]:
    """A one-line value: theirs where only they changed it; mine otherwise, and whether both
    changed it differently (then the caller shows theirs beside it)."""
    if mine == base:
        return theirs, False
    return mine, theirs not in (base, mine)

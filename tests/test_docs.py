"""The prose a newcomer reads holds together: the README stays a five-minute read that opens
with the two commands, every relative link in README.md and docs/*.md reaches a file, and every
Markdown table keeps one cell per column in each row."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
README_MAX_LINES = 250

# [text](target) and ![alt](target); the target ends at whitespace (a title) or ")".
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)[^)]*\)")
CODE_SPAN = re.compile(r"`[^`]*`")


def _prose(text: str) -> str:
    """The text outside fenced code blocks (a link or a pipe inside one is code, not Markdown)."""
    kept, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            kept.append("")
            continue
        kept.append("" if fenced else line)
    return "\n".join(kept)


def _relative_links(page: Path) -> list[str]:
    prose = CODE_SPAN.sub("", _prose(page.read_text(encoding="utf-8")))
    targets = [match.group(1) for match in LINK.finditer(prose)]
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:|^#", t)]


def _cells(row: str) -> int:
    """Cells of a table row: pipes outside code spans and not escaped, less the outer two."""
    bare = CODE_SPAN.sub("code", row.strip()).replace(r"\|", "")
    return bare.count("|") - 1


def test_the_readme_is_a_five_minute_read() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_the_readme_opens_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = text.split("```")[1].splitlines()[1:]  # after the fence's language
    assert [line.split()[:2] for line in first_block] == [
        ["make", "run"],
        ["make", "test"],
    ]
    before = text[: text.index("```")]
    assert [line for line in before.splitlines() if line.strip()] == ["# XMemo Cloud Skills"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_reaches_a_file(page: Path) -> None:
    broken = [
        target
        for target in _relative_links(page)
        if not (page.parent / target.split("#")[0]).exists()
    ]
    assert broken == [], f"{page.relative_to(ROOT)}: {broken}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_table_row_has_one_cell_per_column(page: Path) -> None:
    ragged: list[str] = []
    columns = None
    for line in _prose(page.read_text(encoding="utf-8")).splitlines():
        if not line.lstrip().startswith("|"):
            columns = None
            continue
        if columns is None:
            columns = _cells(line)
        elif _cells(line) != columns:
            ragged.append(line[:80])
    assert ragged == [], f"{page.relative_to(ROOT)}: rows with the wrong number of cells"


DOCSTRING_MAX_LINES = 10
PYTHON_ROOTS = ("skills_app", "xmemo", "bench", "tests", "clients", "manage.py")


def _docstrings(path: Path) -> list[tuple[str, int, int]]:
    """(where, first line, lines) of each docstring in ``path``: module, class and function."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if ast.get_docstring(node, clean=False) is None:
            continue
        string = node.body[0]
        where = getattr(node, "name", "the module")
        found.append(
            (where, string.lineno, (string.end_lineno or string.lineno) - string.lineno + 1)
        )
    return found


def test_no_docstring_is_over_ten_lines() -> None:
    """A docstring says what and why in a few lines; measurements and history go to docs/."""
    files = [
        p
        for root in PYTHON_ROOTS
        for p in ([ROOT / root] if root.endswith(".py") else (ROOT / root).rglob("*.py"))
    ]
    assert len(files) > 100
    long = [
        f"{path.relative_to(ROOT)}:{line} {where}: {lines} lines"
        for path in files
        for where, line, lines in _docstrings(path)
        if lines > DOCSTRING_MAX_LINES
    ]
    assert not long, f"{len(long)} docstrings over {DOCSTRING_MAX_LINES} lines:\n" + "\n".join(long)

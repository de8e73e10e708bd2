"""Word-level revision diff (docs/contract.md §10)."""

from __future__ import annotations

import json
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from skills_app.domain.diff import (
    ComponentSnapshot,
    RevisionSnapshot,
    diff_rows,
    diff_snapshots,
    word_diff,
)

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]+")


def spelled(ops: list[tuple[str, str]], keep: str) -> str:
    return "".join(text for op, text in ops if op in ("equal", keep))


def test_word_diff_changes_whole_words() -> None:
    assert word_diff("The quick brown fox.", "The slow brown fox!") == [
        ("equal", "The "),
        ("delete", "quick"),
        ("insert", "slow"),
        ("equal", " brown fox"),
        ("delete", "."),
        ("insert", "!"),
    ]


def test_word_diff_never_splits_a_word() -> None:
    ops = word_diff("testing", "tested")
    assert ops == [("delete", "testing"), ("insert", "tested")]


def test_word_diff_edge_cases() -> None:
    assert word_diff("", "") == []
    assert word_diff("", "new words") == [("insert", "new words")]
    assert word_diff("old", "") == [("delete", "old")]
    assert word_diff("same text", "same text") == [("equal", "same text")]


_WORDY = st.lists(
    st.one_of(
        st.sampled_from(["alpha", "beta", "gamma", " ", "\n", ".", "—", "한글", "x1", "  "]),
        st.text(max_size=4),
    ),
    max_size=30,
).map("".join)


def _boundaries(text: str) -> set[int]:
    """Token ends, and line starts: the diff compares lines first, so it may cut a run of
    white space at a line break (never a word: no word holds a line break)."""
    ends = {0} | {m.end() for m in re.finditer("\n", text)}
    position = 0
    for token in _TOKEN.findall(text):
        position += len(token)
        ends.add(position)
    return ends


@given(_WORDY, _WORDY)
def test_word_diff_spells_both_texts_on_token_boundaries(a: str, b: str) -> None:
    ops = word_diff(a, b)
    assert spelled(ops, "delete") == a
    assert spelled(ops, "insert") == b
    assert all(text for _op, text in ops)
    for side, keep in ((a, "delete"), (b, "insert")):
        position, cuts = 0, set()
        for op, text in ops:
            if op in ("equal", keep):
                position += len(text)
                cuts.add(position)
        assert cuts <= _boundaries(side)


def snapshot(**changes: Any) -> RevisionSnapshot:
    values: dict[str, Any] = {
        "revision_id": "rev_1",
        "revision_number": 1,
        "name": "Triage",
        "description": "Triage an incident.",
        "frontmatter": {"license": "MIT", "metadata": {"os": ["linux"]}},
        "instruction_body": "Check the logs first.\n",
        "components": {
            "references/a.md": ComponentSnapshot("reference", "aa", 5, "alpha"),
            "assets/logo.png": ComponentSnapshot("artifact", "bb", 3, None),
            "same.md": ComponentSnapshot("document", "cc", 4, "same"),
            "gone.md": ComponentSnapshot("document", "dd", 4, "gone"),
            "retyped.md": ComponentSnapshot("document", "ee", 2, "rt"),
        },
    }
    values.update(changes)
    return RevisionSnapshot(**values)


def test_identical_revisions() -> None:
    result = diff_snapshots(snapshot(), snapshot(revision_id="rev_2", revision_number=2))
    assert result["from"] == {"revision_id": "rev_1", "revision_number": 1}
    assert result["to"] == {"revision_id": "rev_2", "revision_number": 2}
    assert result["name"] is None
    assert result["description"] is None
    assert result["frontmatter"] is None
    assert result["instruction_body"] == [{"op": "equal", "text": "Check the logs first.\n"}]
    assert result["components"]["changed"] == []
    assert result["components"]["unchanged"] == sorted(snapshot().components)
    assert result["stats"] == {"insertions": 0, "deletions": 0}


def test_full_diff() -> None:
    old = snapshot()
    new_components = {
        "references/a.md": ComponentSnapshot("reference", "a2", 10, "alpha beta"),
        "assets/logo.png": ComponentSnapshot("artifact", "b2", 4, None),
        "same.md": ComponentSnapshot("document", "cc", 4, "same"),
        "retyped.md": ComponentSnapshot("template", "ee", 2, "rt"),
        "new.md": ComponentSnapshot("example", "ff", 3, "new"),
    }
    new = snapshot(
        revision_id="rev_2",
        revision_number=2,
        name="Incident Triage",
        frontmatter={"license": "Apache-2.0", "metadata": {"os": ["linux"]}},
        instruction_body="Check the metrics first.\n",
        components=new_components,
    )
    result = diff_snapshots(old, new)
    assert result["name"] == [
        {"op": "insert", "text": "Incident "},
        {"op": "equal", "text": "Triage"},
    ]
    assert result["description"] is None
    frontmatter = result["frontmatter"]
    assert frontmatter is not None
    assert {"op": "delete", "text": "MIT"} in frontmatter
    assert {"op": "insert", "text": "Apache-2.0"} in frontmatter
    assert result["instruction_body"] == [
        {"op": "equal", "text": "Check the "},
        {"op": "delete", "text": "logs"},
        {"op": "insert", "text": "metrics"},
        {"op": "equal", "text": " first.\n"},
    ]
    components = result["components"]
    assert components["added"] == [{"path": "new.md", "type": "example", "size": 3, "sha256": "ff"}]
    assert components["removed"] == [
        {"path": "gone.md", "type": "document", "size": 4, "sha256": "dd"}
    ]
    assert components["unchanged"] == ["same.md"]
    changed = {entry["path"]: entry for entry in components["changed"]}
    assert list(changed) == ["assets/logo.png", "references/a.md", "retyped.md"]
    assert changed["assets/logo.png"] == {
        "path": "assets/logo.png",
        "type": "artifact",
        "old_type": "artifact",
        "old_sha256": "bb",
        "new_sha256": "b2",
        "old_size": 3,
        "new_size": 4,
        "diff": None,
    }
    assert changed["references/a.md"]["diff"] == [
        {"op": "equal", "text": "alpha"},
        {"op": "insert", "text": " beta"},
    ]
    assert changed["retyped.md"]["type"] == "template"
    assert changed["retyped.md"]["old_type"] == "document"
    assert changed["retyped.md"]["diff"] is None
    # inserted: Incident, Apache-2.0, metrics, beta; deleted: MIT, logs
    assert result["stats"] == {"insertions": 4, "deletions": 2}
    json.dumps(result)  # JSON-ready


def test_text_to_binary_change_has_no_word_diff() -> None:
    old = snapshot(components={"f": ComponentSnapshot("artifact", "a", 1, "a")})
    new = snapshot(components={"f": ComponentSnapshot("artifact", "b", 1, None)})
    assert diff_snapshots(old, new)["components"]["changed"][0]["diff"] is None


def test_frontmatter_key_order_alone_is_no_change() -> None:
    old = snapshot(frontmatter={"a": 1, "b": 2})
    new = snapshot(frontmatter={"b": 2, "a": 1})
    assert diff_snapshots(old, new)["frontmatter"] is None


@given(_WORDY, _WORDY)
def test_body_ops_rebuild_both_bodies(a: str, b: str) -> None:
    ops = diff_snapshots(snapshot(instruction_body=a), snapshot(instruction_body=b))[
        "instruction_body"
    ]
    assert "".join(o["text"] for o in ops if o["op"] != "insert") == a
    assert "".join(o["text"] for o in ops if o["op"] != "delete") == b


def test_an_unchanged_line_between_edits_is_never_removed_and_added() -> None:
    """Issue 37 #14: with edits on the lines around it, the cleanup of the word diff folded an
    unchanged line into the edits, so it showed as removed and added again."""
    old = "step one\nok\nstep two\nok\nstep three\n"
    new = "phase alpha\nok\nphase beta\nok\nphase gamma\n"
    ops = word_diff(old, new)
    assert spelled(ops, "delete") == old
    assert spelled(ops, "insert") == new
    assert [text for op, text in ops if op == "equal"] == ["\nok\n", "\nok\n", "\n"]


def test_diff_rows_number_each_side_and_show_unchanged_lines_once() -> None:
    ops = word_diff("# T\n\nKeep.\nRun the migration.\n", "# T\n\nKeep.\nRun it.\nAnnounce.\n")
    rows = [(r.kind, r.old, r.new, "".join(t for _, t in r.pieces)) for r in diff_rows(ops)]
    assert rows == [
        ("equal", 1, 1, "# T"),
        ("equal", 2, 2, ""),
        ("equal", 3, 3, "Keep."),
        ("delete", 4, None, "Run the migration."),
        ("insert", None, 4, "Run it."),
        ("insert", None, 5, "Announce."),
    ]
    [removed] = [r for r in diff_rows(ops) if r.kind == "delete"]
    assert ("delete", "the migration") in removed.pieces

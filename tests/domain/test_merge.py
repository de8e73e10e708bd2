"""The editor's three-way merge (issue 37 #9): theirs' changes land in mine, overlapping changes
keep both sides, and no line of either side is ever dropped."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from skills_app.domain.merge import (
    MINE_MARKER,
    SPLIT_MARKER,
    merge_text,
    merge_value,
    split_lines,
)

BASE = "# Deploy\n\nOne.\nTwo.\nThree.\nFour.\nFive.\n"


def test_their_change_elsewhere_is_applied_onto_mine() -> None:
    mine = BASE.replace("One.", "One, carefully.")
    theirs = BASE.replace("Five.", "Five, then tell the team.")
    merged = merge_text(BASE, mine, theirs, theirs_label="revision #3")
    assert merged.text == mine.replace("Five.", "Five, then tell the team.")
    assert (merged.overlaps, merged.applied) == ((), 1)


def test_an_overlapping_change_keeps_both_sides_between_markers() -> None:
    mine = BASE.replace("Three.", "Three (mine).")
    theirs = BASE.replace("Three.", "Three (theirs).").replace("One.", "Uno.")
    merged = merge_text(BASE, mine, theirs, theirs_label="revision #3")
    assert merged.text == (
        "# Deploy\n\nUno.\nTwo.\n"
        f"{MINE_MARKER}\nThree (mine).\n{SPLIT_MARKER}\nThree (theirs).\n>>>>>>> revision #3\n"
        "Four.\nFive.\n"
    )
    [overlap] = merged.overlaps
    assert (overlap.line, overlap.mine, overlap.theirs) == (
        5,
        "Three (mine).\n",
        "Three (theirs).\n",
    )
    assert merged.applied == 1


def test_the_same_change_on_both_sides_is_taken_once() -> None:
    both = BASE.replace("Two.", "Deux.")
    merged = merge_text(BASE, both, both, theirs_label="r")
    assert (merged.text, merged.overlaps) == (both, ())


def test_insertions_at_one_place_overlap_and_a_last_line_without_newline_is_kept() -> None:
    base = "a\nb"
    merged = merge_text(base, "a\nb\nmine", "a\nb\ntheirs", theirs_label="r")
    assert merged.text == f"a\n{MINE_MARKER}\nb\nmine\n{SPLIT_MARKER}\nb\ntheirs\n>>>>>>> r\n"


def test_one_line_values() -> None:
    assert merge_value("Old", "Old", "Theirs") == ("Theirs", False)
    assert merge_value("Old", "Mine", "Old") == ("Mine", False)
    assert merge_value("Old", "Same", "Same") == ("Same", False)
    assert merge_value("Old", "Mine", "Theirs") == ("Mine", True)


_texts = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "\n", "e"]), max_size=12).map(
    "".join
)


@given(base=_texts, mine=_texts, theirs=_texts)
def test_no_line_of_either_side_is_lost(base: str, mine: str, theirs: str) -> None:
    merged = merge_text(base, mine, theirs, theirs_label="r")
    kept = {line.rstrip("\n") for line in split_lines(merged.text)}
    base_lines = {line.rstrip("\n") for line in split_lines(base)}
    for side in (mine, theirs):
        assert {line.rstrip("\n") for line in split_lines(side)} - base_lines <= kept
    if not merged.overlaps:
        assert MINE_MARKER not in merged.text


@given(base=_texts, other=_texts)
def test_a_side_left_alone_yields_the_other(base: str, other: str) -> None:
    assert merge_text(base, base, other, theirs_label="r").text == other
    assert merge_text(base, other, base, theirs_label="r").text == other
    assert merge_text(base, other, other, theirs_label="r").text == other


def test_a_last_line_without_newline_is_never_glued_to_the_next() -> None:
    # Found by the property above under the CI profile: theirs' new last line "e" met mine's "a".
    merged = merge_text("a\nb\nb\n", "b\na\na\n", "a\nb\ne", theirs_label="r")
    assert "ea" not in split_lines(merged.text)
    assert {"e\n", "a\n"} <= set(split_lines(merged.text))

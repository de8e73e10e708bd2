"""What Level 0 embeds of a revision: its descriptor (name, description, the start of the body)."""

from __future__ import annotations

from skills_app.domain.descriptor import DESCRIPTOR_BODY_CHARS, descriptor_text


def test_name_description_and_body_in_that_order_one_blank_line_apart() -> None:
    text = descriptor_text(name="Deploy", description="Ship the service.", body="Run make.\n")
    assert text == "Deploy\n\nShip the service.\n\nRun make."


def test_the_body_is_cut_at_the_documented_length_on_a_word_boundary() -> None:
    body = "word " * 2000
    text = descriptor_text(name="N", description="D", body=body)
    kept = text.split("\n\n", 2)[2]
    assert len(kept) <= DESCRIPTOR_BODY_CHARS
    assert len(kept) > DESCRIPTOR_BODY_CHARS - len("word ")
    assert kept.endswith("word")  # no half word at the cut


def test_a_body_without_spaces_is_cut_hard() -> None:
    text = descriptor_text(name="N", description="D", body="x" * 10_000)
    assert text == "N\n\nD\n\n" + "x" * DESCRIPTOR_BODY_CHARS


def test_empty_parts_leave_no_blank_sections() -> None:
    assert descriptor_text(name="Only", description="", body="   \n") == "Only"
    assert descriptor_text(name="", description="", body="") == ""


def test_huge_bodies_cost_no_more_than_the_cut() -> None:
    # The tokenizer never sees more than the cut, whatever the revision holds (up to 6 MiB).
    text = descriptor_text(name="N", description="D", body="a b " * 2_000_000)
    assert len(text) <= len("N\n\nD\n\n") + DESCRIPTOR_BODY_CHARS


def test_only_the_first_body_read_characters_matter() -> None:
    from skills_app.domain.descriptor import DESCRIPTOR_BODY_READ

    body = "  \n" + "lorem ipsum dolor " * 500
    assert descriptor_text(name="N", description="D", body=body) == descriptor_text(
        name="N", description="D", body=body[:DESCRIPTOR_BODY_READ]
    )

"""``skill://`` URIs (docs/contract.md §20): the served, pinned and old pinned forms."""

from __future__ import annotations

import pytest

from skills_app.domain.skill_uri import SkillUri, parse_skill_uri, skill_md_uri, skill_uri


def test_the_last_skill_path_segment_is_the_slug_pinned_or_not() -> None:
    assert skill_md_uri("acme", "deploy") == "skill://acme/deploy/SKILL.md"
    assert skill_md_uri("acme", "deploy", "rev_1") == "skill://acme/rev_1/deploy/SKILL.md"
    assert skill_uri("acme", "deploy", "a b/é.md") == "skill://acme/deploy/a%20b/%C3%A9.md"
    assert skill_uri("acme", "deploy") == "skill://acme/deploy"  # the root folder
    assert parse_skill_uri("skill://acme/rev_1/deploy/SKILL.md") == SkillUri(
        "acme", "deploy", "rev_1", "SKILL.md"
    )
    assert parse_skill_uri("skill://acme/deploy/a%20b/%C3%A9.md") == SkillUri(
        "acme", "deploy", None, "a b/é.md"
    )
    assert parse_skill_uri("skill://acme/deploy") == SkillUri("acme", "deploy", None, "")


def test_the_old_pinned_form_names_a_file_but_no_skill() -> None:
    ref = parse_skill_uri("skill://acme/deploy@rev_1/SKILL.md")
    assert ref == SkillUri("acme", "deploy", "rev_1", "SKILL.md", legacy=True)
    assert not ref.is_skill_md


@pytest.mark.parametrize(
    "uri",
    [
        "https://acme/deploy/SKILL.md",
        "skill://",
        "skill://acme",
        "skill://acme/",
        "skill://acme/deploy/",
        "skill://acme//SKILL.md",
        "skill://acme/deploy@/x.md",
        "skill://acme/deploy@rev_1",
        None,
    ],
)
def test_anything_else_is_no_skill_uri(uri: object) -> None:
    assert parse_skill_uri(uri) is None

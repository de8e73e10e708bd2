"""bench/seed.py: whole skills inserted in bulk, as the services would have left them, and a
top-up of a seeded team labelled and embedded like the rest."""

from __future__ import annotations

import pytest
from django.db import connection

from bench.seed import TEAM_SLUG, ensure_account, labelled, seed, seed_labels, seed_vectors
from skills_app.domain.canonical import sha256_hex
from skills_app.domain.search_text import search_columns
from skills_app.models import RevisionEmbedding, Skill, SkillLabel


def _rows_updated(table: str) -> int:
    """How many rows of ``table`` PostgreSQL counts as updated, this connection's last
    transactions included (their counts are flushed, and read afresh)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = %s", [table])
        (count,) = cursor.fetchone()
    return int(count)


@pytest.mark.django_db(transaction=True)
def test_seeding_inserts_whole_skills_and_a_top_up_is_labelled_and_embedded() -> None:
    ensure_account()
    postgresql = connection.vendor == "postgresql"
    updated = _rows_updated("skills_app_skill") if postgresql else 0
    assert seed(6, progress=lambda _: None) == 6  # three revisions each
    assert seed(10, revisions=1, progress=lambda _: None) == 4  # the top-up: one each
    if postgresql:
        # Inserted with their pointers and search columns, never updated afterwards.
        assert _rows_updated("skills_app_skill") == updated
    assert seed(10, progress=lambda _: None) == 0
    assert seed_labels() == 3 * 5  # the odd-numbered half, three labels each
    assert seed_vectors(progress=lambda _: None) == 10

    skills = Skill.objects.filter(workspace__slug=TEAM_SLUG).order_by("slug")
    assert skills.count() == 10
    for skill in skills:
        revisions = list(skill.revisions.order_by("revision_number"))
        assert [r.revision_number for r in revisions] == list(range(1, skill.revision_count + 1))
        published = [r for r in revisions if r.state == "published"]
        assert skill.published_revision == skill.current_revision == published[0]
        assert skill.latest_revision == revisions[-1]
        shown = skill.current_revision
        assert {
            column: getattr(skill, column)
            for column in ("search_name", "search_description", "search_body", "search_lexemes")
        } | {"search_terms": skill.search_terms} == search_columns(
            name=shown.name,
            slug=skill.slug,
            description=shown.description,
            body=shown.instruction_body,
        )
        for revision in revisions:
            components = list(revision.components.select_related("blob"))
            assert len(components) == 4
            assert all(sha256_hex(bytes(c.blob.data)) == c.content_hash for c in components)
            if postgresql:
                assert revision.components_lock == "sealed"  # sealed at commit, by the trigger
        labels = SkillLabel.objects.filter(skill=skill)
        assert {label.revision_id for label in labels} == (
            {shown.pk} if labelled(skill.slug) else set()
        )
        assert RevisionEmbedding.objects.filter(revision=shown).count() == 1

"""Level 0's encoder is now all-MiniLM-L6-v2 tuned for skills (``xmemo/skills-minilm-l6-v1``,
docs/search.md): the vectors of the untuned model are another space, never compared with its
queries, and would only take room. The workers' sweep (or ``manage.py embed_skills``) computes
the new ones; until a skill has one, Level 0 finds it by its words."""

from __future__ import annotations

from typing import Any

from django.db import migrations

UNTUNED = "sentence-transformers/all-MiniLM-L6-v2"


def drop_untuned(apps: Any, schema_editor: Any) -> None:
    apps.get_model("skills_app", "RevisionEmbedding").objects.filter(model=UNTUNED).delete()


class Migration(migrations.Migration):
    dependencies = [("skills_app", "0023_usage")]

    operations = [migrations.RunPython(drop_untuned, migrations.RunPython.noop, elidable=True)]

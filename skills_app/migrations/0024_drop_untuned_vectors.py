"""Level 0's encoder is now all-MiniLM-L6-v2 tuned for skills (``xmemo/skills-minilm-l6-v1``,
docs/search.md): the untuned model's vectors go (``_vectors.drop_vectors_of``)."""

from __future__ import annotations

from django.db import migrations

from skills_app.migrations._vectors import drop_vectors_of


class Migration(migrations.Migration):
    dependencies = [("skills_app", "0023_usage")]

    operations = [drop_vectors_of("sentence-transformers/all-MiniLM-L6-v2")]

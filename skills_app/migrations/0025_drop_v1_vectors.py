"""Level 0's encoder is now ``xmemo/skills-minilm-l6-v2``: v1's recipe with batches built around
near neighbours (docs/search.md). v1's vectors go (``_vectors.drop_vectors_of``)."""

from __future__ import annotations

from django.db import migrations

from skills_app.migrations._vectors import drop_vectors_of


class Migration(migrations.Migration):
    dependencies = [("skills_app", "0024_drop_untuned_vectors")]

    operations = [drop_vectors_of("xmemo/skills-minilm-l6-v1")]

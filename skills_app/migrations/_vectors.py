"""Stored vectors of a model Level 0 no longer runs. Not a migration: Django's loader skips
modules whose names start with an underscore."""

from typing import Any

from django.db import migrations


def drop_vectors_of(model: str) -> migrations.RunPython:
    """A RunPython operation deleting every stored vector of ``model``: another space than the
    served model's queries, never compared with them, only taking room. The periodic sweep (or
    ``manage.py embed_skills``) computes the served model's; until a skill has one, Level 0
    finds it by its words. Nothing to undo: reversed, it does nothing."""

    def drop(apps: Any, schema_editor: Any) -> None:
        apps.get_model("skills_app", "RevisionEmbedding").objects.filter(model=model).delete()

    return migrations.RunPython(drop, migrations.RunPython.noop, elidable=True)

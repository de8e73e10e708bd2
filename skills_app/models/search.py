from __future__ import annotations

from django.db import models

from skills_app.models.skills import SkillRevision


class RevisionEmbedding(models.Model):
    """The embedding of one revision's descriptor for Level 0 semantic retrieval.

    Computed by a worker after the revision is saved (never inside the request) and kept in the
    database, the source of truth: per-process vector caches are rebuilt from these rows. A
    revision is immutable, so its vector for one model never changes; the model's name and
    version stand beside each vector, so a new model is a re-embed, not a guess.
    """

    revision = models.ForeignKey(SkillRevision, on_delete=models.CASCADE, related_name="embeddings")
    model = models.CharField(max_length=100)
    model_version = models.CharField(max_length=100)
    dim = models.PositiveSmallIntegerField()
    vector = models.BinaryField()  # ``dim`` float32 values, little-endian (encoder.embedding)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["revision", "model"], name="uniq_embedding_per_model"),
        ]

    def __str__(self) -> str:
        return f"{self.revision_id}/{self.model}"

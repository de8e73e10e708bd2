from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models.functions import Lower
from django.utils import timezone

from skills_app.models import ids
from skills_app.models.fields import OrderedJSONField
from skills_app.models.tenancy import Workspace, acted_by


class Skill(models.Model):
    """A named skill in one workspace. Its content lives in immutable revisions.

    ``published_revision`` and ``current_revision`` are denormalized pointers kept by the
    services in the same transaction as every change, so recall resolves in one query. The
    ``search_*`` columns mirror the current revision for Level 0 search.
    """

    class Status(models.TextChoices):
        ACTIVE = "active"
        ARCHIVED = "archived"

    skill_id = models.CharField(max_length=40, unique=True, default=ids.skill_id)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="skills")
    slug = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    revision_count = models.PositiveIntegerField(default=0)
    latest_revision = models.ForeignKey(
        "SkillRevision", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    published_revision = models.ForeignKey(
        "SkillRevision", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    current_revision = models.ForeignKey(
        "SkillRevision", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    search_name = models.CharField(max_length=200, blank=True, default="")
    search_description = models.TextField(blank=True, default="")
    search_body = models.TextField(blank=True, default="")
    # Level 0 by words (docs/search.md): the BM25F statistics of the three columns above and
    # their stems, space-separated (matched; PostgreSQL's ``search_vector`` is made of them).
    search_terms = models.JSONField(blank=True, default=dict)
    search_lexemes = models.TextField(blank=True, default="")
    model_invocable = models.BooleanField(default=True)
    # The current revision says ``invoke: {user: true}``: the skill is a command, an MCP prompt
    # (docs/contract.md §18). Kept with the other pointers so prompts/list is one query.
    user_invocable = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "slug"], name="uniq_skill_slug_per_ws"),
        ]
        indexes = [
            models.Index(fields=["slug"], name="skill_slug_idx"),
            models.Index(fields=["workspace", "status"], name="skill_ws_status_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.workspace_id}/{self.slug}"


class SkillRevision(models.Model):
    """An immutable snapshot. Only ``state`` and the review fields ever change (a database
    trigger refuses any other UPDATE)."""

    class State(models.TextChoices):
        DRAFT = "draft"
        PROPOSED = "proposed"
        PUBLISHED = "published"
        DEPRECATED = "deprecated"

    class Source(models.TextChoices):
        CONSOLE = "console"
        API = "api"
        MCP = "mcp"
        IMPORT_SKILL_MD = "import-skill-md"
        IMPORT_ZIP = "import-zip"
        IMPORT_URL = "import-url"
        IMPORT_SKILL_JSON = "import-skill-json"
        RESTORE = "restore"

    revision_id = models.CharField(max_length=40, unique=True, default=ids.revision_id)
    skill = models.ForeignKey(Skill, on_delete=models.CASCADE, related_name="revisions")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    revision_number = models.PositiveIntegerField()
    state = models.CharField(max_length=16, choices=State.choices)
    name = models.CharField(max_length=200)
    description = models.TextField()
    frontmatter = OrderedJSONField(default=dict)
    instruction_body = models.TextField(blank=True)
    canonical_hash = models.CharField(max_length=64)
    # What the Level 1 answer serving this revision costs an agent's context, estimated from the
    # content when the revision is stored (``domain.context_cost``). Derived from immutable
    # content, so as immutable as it (the trigger guards it too); no default: whatever stores a
    # revision must compute it.
    approx_tokens = models.PositiveIntegerField(editable=False)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A restored name that is no member of the team (docs/backup.md): text, never an account.
    # NULL means "an account or nobody" (null on the wire too), and a nullable column without a
    # default is added by SQLite without rebuilding the table, which would drop its triggers.
    imported_author = models.CharField(max_length=150, null=True, blank=True)  # noqa: DJ001
    # A workspace token that wrote it (docs/contract.md §16): it acts as itself, ``author`` stays
    # empty. Immutable like ``author`` (it may only become NULL).
    author_token = models.ForeignKey(
        "skills_app.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    message = models.TextField(blank=True, default="")
    source = models.CharField(max_length=32, choices=Source.choices, default=Source.API)
    source_ref = models.TextField(blank=True, default="")
    # A default rather than auto_now_add: a restore inserts revisions (in bulk) with the time
    # they were first created; nothing may change it afterwards (immutability trigger).
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # Review fields: the only ones besides ``state`` that may change after creation.
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    imported_reviewer = models.CharField(max_length=150, null=True, blank=True)  # noqa: DJ001
    reviewed_by_token = models.ForeignKey(
        "skills_app.ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    review_comment = models.TextField(blank=True, default="")
    state_changed_at = models.DateTimeField(null=True, blank=True)
    # The revision whose review (changes requested or rejected) this one answers: set when it is
    # saved on top of a revision a reviewer sent back, so the author's reply links to the thread.
    answers_revision = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Whether the database lets component rows of this revision be added or removed: "open"
    # while the save that creates it runs, "sealed" from then on, "purging" while it is being
    # deleted for good. Triggers allow only those moves, forwards (migration 0004).
    components_lock = models.CharField(max_length=8, default="open", editable=False)

    class Meta:
        ordering = ["skill_id", "-revision_number"]
        constraints = [
            models.UniqueConstraint(
                fields=["skill", "revision_number"], name="uniq_revision_number_per_skill"
            ),
            models.UniqueConstraint(
                fields=["skill"],
                condition=models.Q(state="published"),
                name="one_published_revision_per_skill",
            ),
        ]
        indexes = [
            models.Index(fields=["workspace", "state"], name="revision_ws_state_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.revision_id} (#{self.revision_number}, {self.state})"

    @property
    def author_label(self) -> str | None:
        return acted_by(self.author, self.author_token)

    @property
    def reviewer_label(self) -> str | None:
        return acted_by(self.reviewed_by, self.reviewed_by_token)


class Blob(models.Model):
    """Content-addressed bytes: identical bytes are stored once however many revisions use them."""

    sha256 = models.CharField(max_length=64, unique=True)
    size = models.PositiveIntegerField()
    data = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.sha256


class SkillComponent(models.Model):
    """One attached file of a revision. Rows are immutable (trigger)."""

    class Type(models.TextChoices):
        REFERENCE = "reference"
        EXAMPLE = "example"
        TEMPLATE = "template"
        DOCUMENT = "document"
        ARTIFACT = "artifact"
        SCRIPT = "script"

    revision = models.ForeignKey(SkillRevision, on_delete=models.CASCADE, related_name="components")
    logical_path = models.CharField(max_length=255)
    type = models.CharField(max_length=16, choices=Type.choices)
    blob = models.ForeignKey(Blob, on_delete=models.PROTECT, related_name="components")
    content_hash = models.CharField(max_length=64)
    size = models.PositiveIntegerField()
    media_type = models.CharField(max_length=127)

    class Meta:
        ordering = ["logical_path"]
        constraints = [
            models.UniqueConstraint(
                fields=["revision", "logical_path"], name="uniq_component_path"
            ),
            models.UniqueConstraint(
                "revision", Lower("logical_path"), name="uniq_component_path_nocase"
            ),
        ]

    def __str__(self) -> str:
        return self.logical_path

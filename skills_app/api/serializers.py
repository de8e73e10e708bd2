"""Input serializers (shape and types only — product rules live in ``domain``/``services``) and
output serializers that document the JSON the selectors produce, for the OpenAPI schema.

Output data is built by ``skills_app.selectors`` (the same dicts MCP and the console use); the
output serializers here describe it and are checked against real responses by schemathesis.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from skills_app import errors
from skills_app.access import ROLES, SCOPES
from skills_app.domain.bundle import COMPONENT_TYPES
from skills_app.domain.permission_modes import PERMISSION_MODES
from skills_app.domain.text import printable
from skills_app.mcp_profiles import DEFAULT_PROFILE
from skills_app.models import Skill, SkillRevision, Workspace

STATES = list(SkillRevision.State.values)


def _text(**kwargs: Any) -> serializers.CharField:
    """Text taken as sent: no trimming (bodies are byte-exact), blank allowed (the domain says
    what is required and names the field)."""
    kwargs.setdefault("allow_blank", True)
    return serializers.CharField(trim_whitespace=False, **kwargs)


# --- input ----------------------------------------------------------------------------------------


class StrictIn(serializers.Serializer):
    """An input that refuses a field it does not know with 400 naming it, where DRF would drop
    it silently (docs/contract.md §16b: a webhook ``name`` is refused, never dropped)."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            unknown = sorted(printable(str(key)) for key in data if key not in self.fields)
            if unknown:
                raise errors.ValidationFailed(
                    f"Unknown field '{unknown[0]}': this request takes "
                    f"{', '.join(sorted(self.fields))}.",
                    details={"field": unknown[0], "unknown": unknown},
                )
        return super().to_internal_value(data)


class ComponentIn(serializers.Serializer):
    logical_path = serializers.CharField(trim_whitespace=False, max_length=1024)
    type = serializers.ChoiceField(choices=list(COMPONENT_TYPES))
    content = _text(help_text="The bytes: UTF-8 text, or base64 when encoding is 'base64'.")
    encoding = serializers.ChoiceField(choices=["utf-8", "base64"], default="utf-8")


class SaveIn(serializers.Serializer):
    """The body of a save (docs/contract.md §6)."""

    workspace = serializers.CharField(max_length=64)
    slug = serializers.CharField(max_length=200)
    name = _text()
    description = _text()
    instruction_body = _text()
    frontmatter = serializers.DictField(child=serializers.JSONField(), required=False, default=dict)
    components = serializers.ListField(
        child=ComponentIn(),
        required=False,
        allow_null=True,
        default=None,
        help_text="The full set of components; omit to carry over the latest revision's.",
    )
    intent = serializers.ChoiceField(choices=["draft", "publish"], default="draft")
    base_revision_id = serializers.CharField(
        max_length=64, required=False, allow_null=True, default=None
    )
    message = _text(required=False, default="")
    acknowledge_secrets = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Store content holding a live secret anyway (audited); else SECRET_DETECTED.",
    )


class LintIn(SaveIn):
    """A save's body, ``workspace`` optional (the caller's personal workspace)."""

    workspace = serializers.CharField(max_length=64, required=False)


class WorkspaceIn(serializers.Serializer):
    slug = serializers.CharField(max_length=200)
    name = _text(max_length=1000)


class WorkspaceSettingsIn(serializers.Serializer):
    name = _text(required=False, max_length=1000)
    require_distinct_reviewer = serializers.BooleanField(required=False)
    allow_dangerous_scripts = serializers.BooleanField(required=False)
    required_approvals = serializers.IntegerField(
        required=False, help_text="Distinct reviewers (never the author) a proposal needs."
    )
    permission_mode = serializers.ChoiceField(
        choices=list(PERMISSION_MODES),
        required=False,
        help_text="What the team's scripts may do by class (dual sign-off, teams only).",
    )


class SecretIn(serializers.Serializer):
    # Any JSON, so that the service (not a silent coercion of 7 to "7") says what a value is.
    value = serializers.JSONField(
        required=False, default=None, help_text="The secret's value; never answered back."
    )


class MemberIn(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=list(ROLES))


class InvitationIn(serializers.Serializer):
    email = serializers.CharField(max_length=254)
    role = serializers.ChoiceField(choices=list(ROLES))


class WebhookIn(StrictIn):
    url = serializers.CharField(max_length=2000)
    events = serializers.ListField(child=serializers.CharField(max_length=40), max_length=20)


class MemberChangeIn(serializers.Serializer):
    role = serializers.ChoiceField(choices=list(ROLES))


class TokenIn(serializers.Serializer):
    name = _text(max_length=1000)
    scopes = serializers.ListField(child=serializers.ChoiceField(choices=list(SCOPES)))
    workspace = serializers.CharField(max_length=64, required=False, allow_null=True, default=None)
    profile = serializers.CharField(max_length=40, required=False, default=DEFAULT_PROFILE)
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    permission_mode = serializers.ChoiceField(
        choices=list(PERMISSION_MODES),
        required=False,
        default="",
        help_text="A permission mode stricter than the workspace's for this token's scripts.",
    )
    owner = serializers.ChoiceField(
        choices=["user", "workspace"],
        required=False,
        default="user",
        help_text="workspace: a token the team owns (owners and admins; needs workspace, role).",
    )
    # Plain text (the service names the allowed roles), so the schema's role enums stay apart.
    role = serializers.CharField(
        max_length=16,
        required=False,
        default="member",
        help_text="A workspace token's role in its workspace: member or admin.",
    )


class CommentIn(serializers.Serializer):
    body = _text(max_length=20_000, help_text="Markdown.")
    line = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text="A line of the body (1-based)."
    )


class CommentOut(serializers.Serializer):
    comment_id = serializers.CharField()
    revision_id = serializers.CharField()
    author = serializers.CharField(allow_null=True)
    imported_author = serializers.CharField(
        allow_null=True, help_text="Restored name of someone not a member of the team (text)."
    )
    body = serializers.CharField()
    body_html = serializers.CharField()
    line = serializers.IntegerField(allow_null=True)
    action = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


class NotificationsIn(serializers.Serializer):
    review_requests = serializers.BooleanField(
        required=False, help_text="As a reviewer: a revision was proposed."
    )
    review_outcomes = serializers.BooleanField(
        required=False, help_text="As an author: approved, rejected, changes requested."
    )
    comments = serializers.BooleanField(
        required=False, help_text="As an author: someone commented on your revision."
    )


class NotificationsOut(serializers.Serializer):
    review_requests = serializers.BooleanField()
    review_outcomes = serializers.BooleanField()
    comments = serializers.BooleanField()


class ActionIn(serializers.Serializer):
    comment = _text(
        required=False,
        default="",
        max_length=10_000,
        help_text="Required to reject or request changes.",
    )
    message = _text(
        required=False,
        default="",
        max_length=2000,
        help_text="restore: the new revision's message.",
    )


# --- output (documentation of the selectors' dicts) ------------------------------------------


def _const(value: str) -> serializers.CharField:
    @extend_schema_field({"type": "string", "enum": [value]})
    class Const(serializers.CharField):
        pass

    return Const()


def _choice(values: list[str], *, allow_null: bool = False) -> serializers.CharField:
    schema: dict[str, Any] = {"type": "string", "enum": values}
    if allow_null:
        schema = {"type": "string", "enum": [*values, None], "nullable": True}

    @extend_schema_field(schema)
    class Choice(serializers.CharField):
        pass

    return Choice(allow_null=allow_null)


class ErrorBody(serializers.Serializer):
    code = serializers.CharField(help_text="UPPER_SNAKE error code (docs/contract.md §7).")
    message = serializers.CharField()
    details = serializers.DictField(child=serializers.JSONField())


class ErrorEnvelope(serializers.Serializer):
    error = ErrorBody()


class ResourceOut(serializers.Serializer):
    logical_path = serializers.CharField()
    type = _choice(list(COMPONENT_TYPES))
    content_hash = serializers.CharField()
    size = serializers.IntegerField()
    media_type = serializers.CharField()


class SearchResultOut(serializers.Serializer):
    skill_id = serializers.CharField()
    slug = serializers.CharField()
    workspace = serializers.CharField()
    scope = _choice(list(Workspace.Kind.values))
    name = serializers.CharField(allow_blank=True)
    description = serializers.CharField(allow_blank=True)
    published_revision_number = serializers.IntegerField(allow_null=True)
    score = serializers.FloatField()
    approx_tokens = serializers.IntegerField(
        min_value=0,
        help_text="Estimated tokens of the Level 1 answer this skill serves by default "
        "(an estimate, not a tokenizer's count: docs/contract.md §5).",
    )


class RecallSearchOut(serializers.Serializer):
    kind = _const("search")
    data = inline_serializer(  # type: ignore[assignment]
        "RecallSearchData", {"results": SearchResultOut(many=True)}
    )


class RenderWarningOut(serializers.Serializer):
    code = serializers.CharField(help_text="UNKNOWN_CONTEXT_VARIABLE")
    field = serializers.CharField()
    message = serializers.CharField()


class RootDataOut(serializers.Serializer):
    skill_id = serializers.CharField()
    slug = serializers.CharField()
    workspace = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    revision_id = serializers.CharField()
    revision_number = serializers.IntegerField()
    state = _choice(STATES)
    canonical_hash = serializers.CharField()
    frontmatter = serializers.DictField(child=serializers.JSONField())
    instruction_body = serializers.CharField(allow_blank=True)
    resolved_by = _choice(["published", "latest_fallback", "pinned", "label"])
    resources = ResourceOut(many=True)
    approx_tokens = serializers.IntegerField(
        min_value=0,
        help_text="Estimated tokens of this answer: name, description, frontmatter, body and "
        "resource manifest (and rendered_body when given), about 4 ASCII characters or 1 other "
        "character per token; an estimate, not a tokenizer's count (docs/contract.md §5).",
    )
    labels = serializers.ListField(
        child=serializers.CharField(),
        help_text="The names of the labels pointing at this revision (docs/contract.md §18).",
    )
    rendered_body = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text="Only when 'arguments' was given (docs/contract.md §11).",
    )
    render_warnings = RenderWarningOut(
        many=True,
        required=False,
        help_text="Only when 'arguments' was given and the render left something out, such as "
        "an unknown ${XMEMO_…} context variable (docs/contract.md §11).",
    )
    scan = serializers.DictField(
        child=serializers.JSONField(),
        help_text="The revision's scan (docs/contract.md §21): verdict (pending, clean, warn, "
        "block), findings, scanner_version.",
    )


class RecallRootOut(serializers.Serializer):
    kind = _const("root")
    data = RootDataOut()  # type: ignore[assignment]


class ResourceDataOut(ResourceOut):
    skill_id = serializers.CharField()
    revision_id = serializers.CharField()
    encoding = _choice(["utf-8", "base64"])
    content = serializers.CharField(allow_blank=True)


class RecallResourceOut(serializers.Serializer):
    kind = _const("resource")
    data = ResourceDataOut()  # type: ignore[assignment]


class LintProblemOut(serializers.Serializer):
    code = serializers.CharField()
    field = serializers.CharField()
    message = serializers.CharField()


class SaveOut(serializers.Serializer):
    skill_id = serializers.CharField()
    revision_id = serializers.CharField()
    revision_number = serializers.IntegerField()
    state = _choice(STATES)
    canonical_hash = serializers.CharField()
    created = serializers.BooleanField()
    warnings = LintProblemOut(many=True, help_text="Agent Skills advice (docs/contract.md §17).")


class ApproxTokensOut(serializers.Serializer):
    level0 = serializers.IntegerField()
    level1 = serializers.IntegerField()
    components = serializers.DictField(child=serializers.IntegerField())


class LintOut(serializers.Serializer):
    # Shadows Serializer.errors on purpose: the schema names the answer's field.
    errors = LintProblemOut(many=True, help_text="What a save would refuse; empty when none.")  # type: ignore[assignment]
    warnings = LintProblemOut(many=True)
    approx_tokens = ApproxTokensOut()
    scan = serializers.DictField(
        child=serializers.JSONField(),
        help_text="The scan of what a save would store (§21): verdict and findings.",
    )


class SyncFileOut(serializers.Serializer):
    path = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()


class SyncSkillOut(serializers.Serializer):
    slug = serializers.CharField()
    workspace = serializers.CharField()
    skill_id = serializers.CharField()
    revision_id = serializers.CharField()
    revision_number = serializers.IntegerField()
    canonical_hash = serializers.CharField()
    files = SyncFileOut(many=True, help_text="SKILL.md first, then the components by path.")


class SyncOut(serializers.Serializer):
    skills = SyncSkillOut(many=True)


class BundleFileOut(serializers.Serializer):
    path = serializers.CharField()
    type = serializers.ChoiceField(choices=list(COMPONENT_TYPES), allow_null=True)
    encoding = _choice(["utf-8", "base64"])
    content = serializers.CharField()
    sha256 = serializers.CharField()


class BundleOut(serializers.Serializer):
    revision_id = serializers.CharField()
    canonical_hash = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    frontmatter = serializers.DictField(child=serializers.JSONField())
    instruction_body = serializers.CharField(allow_blank=True)
    files = BundleFileOut(many=True, help_text="SKILL.md (type null) first, then components.")
    scan = serializers.DictField(
        child=serializers.JSONField(),
        help_text="The revision's scan: verdict, findings, scanner_version.",
    )


class RevisionRefOut(serializers.Serializer):
    revision_id = serializers.CharField()
    revision_number = serializers.IntegerField()


class LatestRefOut(RevisionRefOut):
    state = _choice(STATES)


class SkillOut(serializers.Serializer):
    skill_id = serializers.CharField()
    slug = serializers.CharField()
    workspace = serializers.CharField()
    scope = _choice(list(Workspace.Kind.values))
    status = _choice(list(Skill.Status.values))
    name = serializers.CharField(allow_blank=True)
    description = serializers.CharField(allow_blank=True)
    model_invocable = serializers.BooleanField()
    revision_count = serializers.IntegerField()
    published_revision = RevisionRefOut(allow_null=True)
    latest_revision = LatestRefOut(allow_null=True)
    awaiting_review = serializers.IntegerField(help_text="Proposed revisions waiting for review.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class RevisionOut(serializers.Serializer):
    revision_id = serializers.CharField()
    skill_id = serializers.CharField()
    slug = serializers.CharField()
    workspace = serializers.CharField()
    revision_number = serializers.IntegerField()
    state = _choice(STATES)
    name = serializers.CharField()
    description = serializers.CharField()
    canonical_hash = serializers.CharField()
    parent_revision_id = serializers.CharField(allow_null=True)
    author = serializers.CharField(allow_null=True)
    imported_author = serializers.CharField(
        allow_null=True, help_text="Restored name of someone not a member of the team (text)."
    )
    message = serializers.CharField(allow_blank=True)
    source = _choice(list(SkillRevision.Source.values))  # type: ignore[assignment]
    source_ref = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()
    state_changed_at = serializers.DateTimeField(allow_null=True)
    reviewed_by = serializers.CharField(allow_null=True)
    imported_reviewer = serializers.CharField(
        allow_null=True, help_text="Restored name of someone not a member of the team (text)."
    )
    reviewed_at = serializers.DateTimeField(allow_null=True)
    review_comment = serializers.CharField(allow_blank=True)


class ApprovalOut(serializers.Serializer):
    user = serializers.CharField(allow_null=True)
    imported_user = serializers.CharField(
        allow_null=True, help_text="Restored name of someone not a member of the team (text)."
    )
    created_at = serializers.DateTimeField()


class RevisionDetailOut(RevisionOut):
    answers_revision_id = serializers.CharField(
        allow_null=True, help_text="The revision whose review (changes requested) this answers."
    )
    approvals = ApprovalOut(many=True)
    frontmatter = serializers.DictField(child=serializers.JSONField())
    instruction_body = serializers.CharField(allow_blank=True)
    components = ResourceOut(many=True)


class WorkspaceOut(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField()
    kind = _choice(list(Workspace.Kind.values))
    role = serializers.CharField(allow_null=True)
    cloud_skills_enabled = serializers.BooleanField()
    require_distinct_reviewer = serializers.BooleanField()
    allow_dangerous_scripts = serializers.BooleanField()
    required_approvals = serializers.IntegerField()
    permission_mode = _choice(list(PERMISSION_MODES), allow_null=True)
    created_at = serializers.DateTimeField()


class LabelIn(serializers.Serializer):
    revision_id = serializers.CharField(max_length=64)


class LabelOut(serializers.Serializer):
    name = serializers.CharField()
    revision_id = serializers.CharField()
    revision_number = serializers.IntegerField()
    moved_by = serializers.CharField(allow_null=True)
    moved_at = serializers.DateTimeField()


class SecretOut(serializers.Serializer):
    name = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class MemberOut(serializers.Serializer):
    username = serializers.CharField()
    role = _choice(list(ROLES))
    created_at = serializers.DateTimeField()


class InvitationOut(serializers.Serializer):
    id = serializers.CharField()
    email = serializers.CharField()
    role = _choice(list(ROLES))
    state = _choice(["pending", "accepted", "revoked", "expired"])
    invited_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    expires_at = serializers.DateTimeField()


class WebhookOut(serializers.Serializer):
    id = serializers.CharField()
    url = serializers.CharField()
    events = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField()


class WebhookCreatedOut(WebhookOut):
    secret = serializers.CharField(help_text="The signing secret. Shown only in this answer.")


class WebhookAttemptOut(serializers.Serializer):
    number = serializers.IntegerField()
    status_code = serializers.IntegerField(allow_null=True)
    latency_ms = serializers.IntegerField()
    response_excerpt = serializers.CharField()
    error = serializers.CharField()
    at = serializers.DateTimeField()


class WebhookDeliveryOut(serializers.Serializer):
    id = serializers.CharField()
    event_id = serializers.CharField()
    type = serializers.CharField()
    state = _choice(["pending", "succeeded", "failed"])
    created_at = serializers.DateTimeField()
    attempts = WebhookAttemptOut(many=True)


class TokenOut(serializers.Serializer):
    token_id = serializers.CharField()
    name = serializers.CharField()
    prefix = serializers.CharField()
    scopes = serializers.ListField(child=_choice(list(SCOPES)))
    workspace = serializers.CharField(allow_null=True)
    profile = serializers.CharField()
    expires_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)
    owner = _choice(["user", "workspace"])
    role = serializers.CharField(allow_null=True)
    permission_mode = _choice(list(PERMISSION_MODES), allow_null=True)
    created_by = serializers.CharField(allow_null=True)


class TokenCreatedOut(serializers.Serializer):
    token_id = serializers.CharField()
    token = serializers.CharField(help_text="The bearer secret. Shown only in this answer.")
    name = serializers.CharField()
    scopes = serializers.ListField(child=_choice(list(SCOPES)))
    workspace = serializers.CharField(allow_null=True)
    profile = serializers.CharField()
    expires_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()
    owner = _choice(["user", "workspace"])
    role = serializers.CharField(allow_null=True)
    permission_mode = _choice(list(PERMISSION_MODES), allow_null=True)


class AuditOut(serializers.Serializer):
    action = serializers.CharField()
    actor = serializers.CharField(allow_null=True)
    target_type = serializers.CharField(allow_blank=True)
    target_id = serializers.CharField(allow_blank=True)
    data = serializers.DictField(child=serializers.JSONField())  # type: ignore[assignment]
    ip = serializers.CharField(allow_null=True)
    via = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


def page_of(name: str, item: serializers.Serializer) -> serializers.Serializer:
    return inline_serializer(
        name,
        {
            "results": item.__class__(many=True),
            "next_cursor": serializers.CharField(
                allow_null=True, help_text="Pass as ?cursor= for the next page; null at the end."
            ),
        },
    )


class DiffOpOut(serializers.Serializer):
    op = _choice(["equal", "insert", "delete"])
    text = serializers.CharField(allow_blank=True)


class DiffListingOut(serializers.Serializer):
    path = serializers.CharField()
    type = _choice(list(COMPONENT_TYPES))
    size = serializers.IntegerField()
    sha256 = serializers.CharField()


class DiffChangeOut(serializers.Serializer):
    path = serializers.CharField()
    type = _choice(list(COMPONENT_TYPES))
    old_type = _choice(list(COMPONENT_TYPES))
    old_sha256 = serializers.CharField()
    new_sha256 = serializers.CharField()
    old_size = serializers.IntegerField()
    new_size = serializers.IntegerField()
    diff = DiffOpOut(many=True, allow_null=True)


class DiffComponentsOut(serializers.Serializer):
    added = DiffListingOut(many=True)
    removed = DiffListingOut(many=True)
    changed = DiffChangeOut(many=True)
    unchanged = serializers.ListField(child=serializers.CharField())


class DiffStatsOut(serializers.Serializer):
    insertions = serializers.IntegerField()
    deletions = serializers.IntegerField()


# "from" is a Python keyword, hence the class built from a dict.
DiffOut = inline_serializer(
    "SkillDiff",
    {
        "skill_id": serializers.CharField(),
        "from": RevisionRefOut(),
        "to": RevisionRefOut(),
        "name": DiffOpOut(many=True, allow_null=True),
        "description": DiffOpOut(many=True, allow_null=True),
        "frontmatter": DiffOpOut(many=True, allow_null=True),
        "instruction_body": DiffOpOut(many=True),
        "components": DiffComponentsOut(),
        "stats": DiffStatsOut(),
        "truncated": serializers.BooleanField(
            help_text="The time budget ran out: some texts got a valid but coarser diff."
        ),
    },
)


class UsageDayOut(serializers.Serializer):
    date = serializers.DateField()
    level1 = serializers.IntegerField()
    level2 = serializers.IntegerField()


class UsageRevisionOut(serializers.Serializer):
    revision_id = serializers.CharField()
    revision_number = serializers.IntegerField()
    level1 = serializers.IntegerField()
    level2 = serializers.IntegerField()


class UsageClientOut(serializers.Serializer):
    name = serializers.CharField()
    level1 = serializers.IntegerField()
    level2 = serializers.IntegerField()


class SkillUsageOut(serializers.Serializer):
    last_recalled_at = serializers.DateTimeField(allow_null=True)
    days = UsageDayOut(many=True)
    by_revision = UsageRevisionOut(many=True)
    by_client = UsageClientOut(many=True)

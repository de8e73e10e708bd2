"""Input serializers (shape and types only — product rules live in ``domain``/``services``) and
output serializers that document the JSON the selectors produce, for the OpenAPI schema.

Each output serializer is made from its shape in ``domain/shapes`` (``serializer_for``), the
TypedDict the selectors and services return and MCP's ``outputSchema`` is made from too; the
schema is checked against real responses by schemathesis.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from drf_spectacular.utils import extend_schema_field, inline_serializer
from rest_framework import serializers

from skills_app import errors
from skills_app.access import ROLES, SCOPES
from skills_app.domain import shapes
from skills_app.domain.bundle import COMPONENT_TYPES
from skills_app.domain.permission_modes import PERMISSION_MODES
from skills_app.domain.shapes.reading import Field, fields_of
from skills_app.domain.text import printable
from skills_app.mcp_profiles import DEFAULT_PROFILE
from skills_app.models import SkillRevision

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


_SCALAR_FIELDS: dict[str, type[serializers.Field]] = {
    "str": serializers.CharField,
    "int": serializers.IntegerField,
    "float": serializers.FloatField,
    "bool": serializers.BooleanField,
}


def _field(field: Field, **kwargs: Any) -> serializers.Field:
    """The serializer field documenting one member of a shape."""
    if field.doc is not None:
        kwargs["help_text"] = field.doc
    if not field.required:
        kwargs["required"] = False
    if field.kind == "const":
        assert field.const is not None
        return _const(field.const)
    if field.choices is not None and not field.nullable:
        return _choice(list(field.choices))
    if field.choices is not None:
        return serializers.ChoiceField(choices=list(field.choices), allow_null=True, **kwargs)
    if field.nullable:
        kwargs["allow_null"] = True
    if field.kind == "shape":
        assert field.shape is not None
        return serializer_for(field.shape)(**kwargs)
    if field.kind == "list":
        assert field.item is not None
        if field.item.kind == "shape" and field.item.shape is not None:
            return serializer_for(field.item.shape)(many=True, **kwargs)
        return serializers.ListField(child=_field(field.item), **kwargs)
    if field.kind == "any":
        return serializers.JSONField(**kwargs)
    if field.kind in ("object", "map"):
        child = serializers.JSONField() if field.item is None else _field(field.item)
        return serializers.DictField(child=child, **kwargs)
    if field.format == "date-time":
        return serializers.DateTimeField(**kwargs)
    if field.format == "date":
        return serializers.DateField(**kwargs)
    if field.minimum is not None:
        kwargs["min_value"] = field.minimum
    return _SCALAR_FIELDS[field.kind](**kwargs)


@cache
def serializer_for(shape: type) -> type[serializers.Serializer]:
    """The output serializer documenting ``shape`` (a TypedDict of ``domain.shapes``) for the
    OpenAPI schema: its component is named after the shape. Never used to serialize."""
    members = {name: _field(field) for name, field in fields_of(shape).items()}
    return type(shape.__name__, (serializers.Serializer,), members)


ErrorBody = serializer_for(shapes.ErrorBody)
ErrorEnvelope = serializer_for(shapes.ErrorEnvelope)
CommentOut = serializer_for(shapes.Comment)
NotificationsOut = serializer_for(shapes.Notifications)
ResourceOut = serializer_for(shapes.Resource)
SearchResultOut = serializer_for(shapes.SearchResult)
RecallSearchOut = serializer_for(shapes.RecallSearch)
RenderWarningOut = serializer_for(shapes.RenderWarning)
RootDataOut = serializer_for(shapes.RootData)
RecallRootOut = serializer_for(shapes.RecallRoot)
ResourceDataOut = serializer_for(shapes.ResourceData)
RecallResourceOut = serializer_for(shapes.RecallResource)
LintProblemOut = serializer_for(shapes.LintProblem)
SaveOut = serializer_for(shapes.Save)
ApproxTokensOut = serializer_for(shapes.ApproxTokens)
LintOut = serializer_for(shapes.Lint)
SyncFileOut = serializer_for(shapes.SyncFile)
SyncSkillOut = serializer_for(shapes.SyncSkill)
SyncOut = serializer_for(shapes.Sync)
BundleFileOut = serializer_for(shapes.BundleFile)
BundleOut = serializer_for(shapes.Bundle)
RevisionRefOut = serializer_for(shapes.RevisionRef)
LatestRefOut = serializer_for(shapes.LatestRef)
SkillOut = serializer_for(shapes.Skill)
RevisionOut = serializer_for(shapes.Revision)
ApprovalOut = serializer_for(shapes.Approval)
RevisionDetailOut = serializer_for(shapes.RevisionDetail)
WorkspaceOut = serializer_for(shapes.Workspace)


class LabelIn(serializers.Serializer):
    revision_id = serializers.CharField(max_length=64)


LabelOut = serializer_for(shapes.Label)
SecretOut = serializer_for(shapes.Secret)
MemberOut = serializer_for(shapes.Member)
InvitationOut = serializer_for(shapes.Invitation)
WebhookOut = serializer_for(shapes.Webhook)
WebhookCreatedOut = serializer_for(shapes.WebhookCreated)
WebhookAttemptOut = serializer_for(shapes.WebhookAttempt)
WebhookDeliveryOut = serializer_for(shapes.WebhookDelivery)
TokenOut = serializer_for(shapes.Token)
TokenCreatedOut = serializer_for(shapes.TokenCreated)
AuditOut = serializer_for(shapes.Audit)


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


DiffOpOut = serializer_for(shapes.DiffOp)
DiffListingOut = serializer_for(shapes.DiffListing)
DiffChangeOut = serializer_for(shapes.DiffChange)
DiffComponentsOut = serializer_for(shapes.DiffComponents)
DiffStatsOut = serializer_for(shapes.DiffStats)
DiffOut = serializer_for(shapes.SkillDiff)
OutcomesOut = serializer_for(shapes.Outcomes)
UsageDayOut = serializer_for(shapes.UsageDay)
UsageRevisionOut = serializer_for(shapes.UsageRevision)
UsageClientOut = serializer_for(shapes.UsageClient)
SkillUsageOut = serializer_for(shapes.SkillUsage)
RevisionEvalsOut = serializer_for(shapes.RevisionEvals)
ProgressOut = serializer_for(shapes.Progress)
JobOut = serializer_for(shapes.Job)
OutcomeReportOut = serializer_for(shapes.OutcomeReport)

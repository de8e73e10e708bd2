"""Save (docs/contract.md §6), skills, revisions, lifecycle actions, components and diff
(docs/contract.md §7, §10)."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from skills_app import errors
from skills_app.access import revision_for, skill_for
from skills_app.api.serializers import (
    ActionIn,
    DiffOut,
    RevisionDetailOut,
    RevisionOut,
    SaveIn,
    SaveOut,
    SkillOut,
    SkillUsageOut,
    page_of,
)
from skills_app.api.views.base import ApiView, if_none_match, not_modified, page_response
from skills_app.domain import shapes
from skills_app.domain.lifecycle import REVISION_ACTIONS
from skills_app.gateway.downloads import download_response
from skills_app.gateway.save_payload import save_payload_read
from skills_app.gateway.shapes import (
    revision_as_dict,
    revision_detail_as_dict,
    save_as_dict,
    skill_as_dict,
)
from skills_app.selectors.skills import (
    STATES,
    STATUSES,
    RevisionDetail,
    component_file,
    revision_detail,
    revision_detail_of,
    revision_list,
    skill_detail,
    skill_diff,
    skill_list,
    skill_loaded,
)
from skills_app.selectors.usage import USAGE_DEFAULT_DAYS, USAGE_MAX_DAYS, skill_usage, usage_days
from skills_app.services.save import save_from_payload
from skills_app.services.skills import (
    revision_restore,
    revision_transition,
    skill_delete,
    skill_set_status,
)


def _revision_detail(detail: RevisionDetail) -> shapes.RevisionDetail:
    return revision_detail_as_dict(
        detail.revision, components=detail.components, approvals=detail.approvals
    )


PAGE_PARAMS = [
    OpenApiParameter("cursor", OpenApiTypes.STR, description="next_cursor of the previous page."),
    OpenApiParameter("limit", OpenApiTypes.INT, description="Page size, 1 to 100 (default 50)."),
]


class SaveView(ApiView):
    @extend_schema(
        operation_id="skills_save",
        summary="Save a new revision (creates the skill on first save)",
        request=SaveIn,
        responses={201: SaveOut, 200: SaveOut},
        tags=["skills"],
    )
    def post(self, request: Request) -> Response:
        # SaveIn documents the body; the checks themselves are the MCP tool's too.
        read = save_payload_read(actor=self.actor, payload=request.data)
        saved = save_from_payload(actor=self.actor, read=read)
        answer = save_as_dict(saved)
        return Response(answer, status=201 if saved.created else 200)


class SkillListView(ApiView):
    @extend_schema(
        operation_id="skills_list",
        summary="Skills of the workspaces you can read",
        parameters=[
            OpenApiParameter("workspace", OpenApiTypes.STR, description="Only this workspace."),
            OpenApiParameter(
                "state", OpenApiTypes.STR, enum=list(STATES), description="Has a revision in it."
            ),
            OpenApiParameter("status", OpenApiTypes.STR, enum=list(STATUSES)),
            *PAGE_PARAMS,
        ],
        responses={200: page_of("SkillPage", SkillOut())},
        tags=["skills"],
    )
    def get(self, request: Request) -> Response:
        return page_response(
            skill_list(
                actor=self.actor,
                workspace=self.param("workspace"),
                state=self.param("state"),
                status=self.param("status"),
                cursor=self.param("cursor"),
                limit=self.limit(),
            ).page(skill_as_dict)
        )


class SkillDetailView(ApiView):
    @extend_schema(operation_id="skills_retrieve", responses={200: SkillOut}, tags=["skills"])
    def get(self, request: Request, skill_id: str) -> Response:
        return Response(skill_as_dict(skill_detail(actor=self.actor, skill_id=skill_id)))

    @extend_schema(
        operation_id="skills_destroy",
        summary="Delete an archived skill and all its revisions for good",
        responses={204: None},
        tags=["skills"],
    )
    def delete(self, request: Request, skill_id: str) -> Response:
        skill_delete(actor=self.actor, skill=skill_for(self.actor, skill_id))
        return Response(status=204)


class SkillStatusView(ApiView):
    status_value = "archived"

    @extend_schema(request=None, responses={200: SkillOut}, tags=["skills"])
    def post(self, request: Request, skill_id: str) -> Response:
        actor = self.actor
        skill = skill_set_status(
            actor=actor, skill=skill_for(actor, skill_id), status=self.status_value
        )
        return Response(skill_as_dict(skill_loaded(skill)))


class SkillArchiveView(SkillStatusView):
    status_value = "archived"


class SkillUnarchiveView(SkillStatusView):
    status_value = "active"


class RevisionListView(ApiView):
    @extend_schema(
        operation_id="skills_revisions_list",
        summary="A skill's revisions, newest first",
        parameters=[OpenApiParameter("state", OpenApiTypes.STR, enum=list(STATES)), *PAGE_PARAMS],
        responses={200: page_of("RevisionPage", RevisionOut())},
        tags=["revisions"],
    )
    def get(self, request: Request, skill_id: str) -> Response:
        return page_response(
            revision_list(
                actor=self.actor,
                skill_id=skill_id,
                state=self.param("state"),
                cursor=self.param("cursor"),
                limit=self.limit(),
            ).page(revision_as_dict)
        )


class SkillDiffView(ApiView):
    @extend_schema(
        operation_id="skills_diff",
        summary="Word-level diff between two revisions of a skill (docs/contract.md §10)",
        parameters=[
            OpenApiParameter(
                "from", OpenApiTypes.STR, description="Default: the published revision."
            ),
            OpenApiParameter("to", OpenApiTypes.STR, description="Default: the latest revision."),
        ],
        responses={200: DiffOut},
        tags=["revisions"],
    )
    def get(self, request: Request, skill_id: str) -> Response:
        return Response(
            skill_diff(
                actor=self.actor,
                skill_id=skill_id,
                from_revision_id=self.param("from"),
                to_revision_id=self.param("to"),
            )
        )


class SkillUsageView(ApiView):
    @extend_schema(
        operation_id="skills_usage",
        summary="Level 1 and Level 2 recalls of a skill per day, revision and client "
        "(docs/contract.md §19)",
        parameters=[
            OpenApiParameter(
                "days",
                OpenApiTypes.INT,
                description=f"The last N days, today included (1 to {USAGE_MAX_DAYS}, "
                f"default {USAGE_DEFAULT_DAYS}).",
            )
        ],
        responses={200: SkillUsageOut},
        tags=["skills"],
    )
    def get(self, request: Request, skill_id: str) -> Response:
        days = usage_days(self.param("days"))
        return Response(skill_usage(actor=self.actor, skill_id=skill_id, days=days))


class RevisionDetailView(ApiView):
    @extend_schema(
        operation_id="revisions_retrieve",
        summary="One revision with its body, frontmatter and component manifest",
        responses={200: RevisionDetailOut},
        tags=["revisions"],
    )
    def get(self, request: Request, revision_id: str) -> Response:
        detail = revision_detail(actor=self.actor, revision_id=revision_id)
        return Response(_revision_detail(detail))


class RevisionActionView(ApiView):
    @extend_schema(
        operation_id="revisions_action",
        summary="A lifecycle action (docs/contract.md §4); restore answers the new revision",
        parameters=[
            OpenApiParameter(
                "action", OpenApiTypes.STR, OpenApiParameter.PATH, enum=list(REVISION_ACTIONS)
            )
        ],
        request=ActionIn,
        responses={200: RevisionDetailOut, 201: RevisionDetailOut},
        tags=["revisions"],
    )
    def post(self, request: Request, revision_id: str, action: str) -> Response:
        if action not in REVISION_ACTIONS:
            raise errors.NotFound(
                f"There is no lifecycle action '{action}'; use one of "
                f"{', '.join(REVISION_ACTIONS)}.",
                details={"action": action},
            )
        data = self.validated(ActionIn)
        actor = self.actor
        revision = revision_for(actor, revision_id)
        if action == "restore":
            result = revision_restore(actor=actor, revision=revision, message=data["message"])
            return Response(
                _revision_detail(revision_detail_of(result.revision)),
                status=201 if result.created else 200,
            )
        moved = revision_transition(
            actor=actor, revision=revision, action=action, comment=data["comment"]
        )
        return Response(_revision_detail(revision_detail_of(moved)))


# Media types a browser would run or render as a document: served as plain text/bytes.
_ACTIVE_MEDIA_TYPES = {
    "text/html",
    "application/xhtml+xml",
    "image/svg+xml",
    "text/xml",
    "application/xml",
    "text/javascript",
    "application/javascript",
    "application/ecmascript",
    "text/ecmascript",
    "application/x-javascript",
}
_INLINE_MEDIA_TYPES = {
    "text/plain",
    "text/markdown",
    "application/json",
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
}
CSP_SANDBOX = "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'"


def _served_type(media_type: str, text: bool) -> tuple[str, bool]:
    """(Content-Type to send, inline?) — never a type the browser would execute."""
    base = media_type.split(";")[0].strip().lower()
    if base in _ACTIVE_MEDIA_TYPES or "/" not in base:
        return ("text/plain; charset=utf-8" if text else "application/octet-stream"), False
    if text and (base.startswith("text/") or base in ("application/json", "application/yaml")):
        return f"{base}; charset=utf-8", base in _INLINE_MEDIA_TYPES
    return base, base in _INLINE_MEDIA_TYPES


class ComponentFileView(ApiView):
    @extend_schema(
        operation_id="revisions_component",
        summary="One component's raw bytes",
        responses={
            (200, "*/*"): OpenApiResponse(
                response=OpenApiTypes.BINARY,
                description="The bytes; ETag is the content hash.",
            ),
            304: OpenApiResponse(description="Not modified."),
        },
        tags=["revisions"],
    )
    def get(self, request: Request, revision_id: str, logical_path: str) -> HttpResponse:
        component = component_file(
            actor=self.actor, revision_id=revision_id, logical_path=logical_path
        )
        etag = f'"{component.content_hash}"'
        cache_control = "private, max-age=86400, immutable"
        if if_none_match(request._request, etag):
            return not_modified(etag, cache_control)
        content_type, inline = _served_type(component.media_type, component.encoding == "utf-8")
        response = download_response(
            component.raw,
            filename=component.logical_path,
            content_type=content_type,
            inline=inline,
        )
        response["ETag"] = etag
        response["Cache-Control"] = cache_control
        response["Content-Security-Policy"] = CSP_SANDBOX
        return response

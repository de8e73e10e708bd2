"""Imports, exports, sandboxed execution and job polling (docs/contract.md §7-9, §13)."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from skills_app import errors
from skills_app.access import revision_for, skill_for, workspace_for
from skills_app.api.serializers import JobOut
from skills_app.api.views.base import ApiView
from skills_app.gateway.downloads import download_response
from skills_app.selectors.jobs import job_as_dict, job_get, job_output
from skills_app.services.jobs import (
    MAX_UPLOAD_BYTES,
    execute_start,
    export_start,
    import_start,
    restore_start,
)

INTENTS = ["draft", "publish"]


class ImportUrlIn(serializers.Serializer):
    url = serializers.URLField(max_length=2000)
    workspace = serializers.CharField(max_length=64)
    slug = serializers.CharField(max_length=64, required=False, allow_blank=True)
    intent = serializers.ChoiceField(choices=INTENTS, default="draft")
    acknowledge_secrets = serializers.BooleanField(required=False, default=False)


class ImportFileIn(serializers.Serializer):
    file = serializers.FileField()
    workspace = serializers.CharField(max_length=64)
    slug = serializers.CharField(max_length=64, required=False, allow_blank=True)
    intent = serializers.ChoiceField(choices=INTENTS, default="draft")
    acknowledge_secrets = serializers.BooleanField(required=False, default=False)


class RestoreIn(serializers.Serializer):
    file = serializers.FileField()


class ExportIn(serializers.Serializer):
    revision_id = serializers.CharField(max_length=40, required=False)
    skill_id = serializers.CharField(max_length=40, required=False)
    workspace = serializers.CharField(max_length=64, required=False)


class ExecuteIn(serializers.Serializer):
    resource = serializers.CharField(max_length=255)
    args = serializers.DictField(required=False, default=dict)
    confirm = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Run a mutating (or dangerous) script: without it 409 CONFIRMATION_REQUIRED.",
    )


def _accepted(job: Any) -> Response:
    return Response(job_as_dict(job), status=202)


class ImportView(ApiView):
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    @extend_schema(
        operation_id="imports_create",
        summary="Import a SKILL.md, ZIP, skill.json or URL as a background job",
        request={"application/json": ImportUrlIn, "multipart/form-data": ImportFileIn},
        responses={202: JobOut},
        tags=["jobs"],
    )
    def post(self, request: Request) -> Response:
        actor = self.actor
        if "file" in request.FILES:
            data = self._validated_form(ImportFileIn)
            upload = data["file"]
            if upload.size > MAX_UPLOAD_BYTES:
                raise errors.UnsafeArchive(
                    f"The upload is larger than {MAX_UPLOAD_BYTES} bytes.",
                    details={"limit": MAX_UPLOAD_BYTES, "filename": upload.name},
                )
            job = import_start(
                actor=actor,
                workspace=workspace_for(actor, data["workspace"]),
                data=upload.read(),
                filename=upload.name or "",
                slug=data.get("slug") or None,
                intent=data["intent"],
                acknowledge_secrets=data["acknowledge_secrets"],
            )
        else:
            data = self._validated_form(ImportUrlIn)
            job = import_start(
                actor=actor,
                workspace=workspace_for(actor, data["workspace"]),
                url=data["url"],
                slug=data.get("slug") or None,
                intent=data["intent"],
                acknowledge_secrets=data["acknowledge_secrets"],
            )
        return _accepted(job)

    def _validated_form(self, serializer_class: type[serializers.Serializer]) -> dict[str, Any]:
        payload = self.request.data
        if not hasattr(payload, "get"):
            raise errors.ValidationFailed("The request body must be a JSON object or a form.")
        serializer = serializer_class(data=payload)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)


class ExportView(ApiView):
    @extend_schema(
        operation_id="exports_create",
        summary="Export a revision or a skill's revisions as capsules, or a workspace backup",
        request=ExportIn,
        responses={202: JobOut},
        tags=["jobs"],
    )
    def post(self, request: Request) -> Response:
        data = self.validated(ExportIn)
        actor = self.actor
        given = [key for key in ("revision_id", "skill_id", "workspace") if data.get(key)]
        if len(given) != 1:
            raise errors.ValidationFailed(
                "Give exactly one of revision_id, skill_id or workspace.",
                details={"given": given},
            )
        if given == ["revision_id"]:
            job = export_start(actor=actor, revision=revision_for(actor, data["revision_id"]))
        elif given == ["skill_id"]:
            job = export_start(actor=actor, skill=skill_for(actor, data["skill_id"]))
        else:
            job = export_start(actor=actor, workspace=workspace_for(actor, data["workspace"]))
        return _accepted(job)


class RestoreView(ApiView):
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        operation_id="workspaces_restore",
        summary="Restore a workspace backup into this empty team workspace, as a job",
        request={"multipart/form-data": RestoreIn},
        responses={202: JobOut},
        tags=["jobs"],
    )
    def post(self, request: Request, ws: str) -> Response:
        actor = self.actor
        workspace = workspace_for(actor, ws)
        upload = request.FILES.get("file")
        if upload is None:
            raise errors.ValidationFailed(
                "Send the backup ZIP as the multipart field 'file'.", details={"field": "file"}
            )
        job = restore_start(
            actor=actor, workspace=workspace, data=upload.read(), filename=upload.name or ""
        )
        return _accepted(job)


class ExecuteView(ApiView):
    @extend_schema(
        operation_id="revisions_execute",
        summary="Run one script component of this revision in the sandbox, as a job",
        request=ExecuteIn,
        responses={202: JobOut},
        tags=["jobs"],
    )
    def post(self, request: Request, revision_id: str) -> Response:
        data = self.validated(ExecuteIn)
        actor = self.actor
        job = execute_start(
            actor=actor,
            revision=revision_for(actor, revision_id),
            resource=data["resource"],
            args=data["args"],
            confirm=data["confirm"],
        )
        return _accepted(job)


class JobDetailView(ApiView):
    @extend_schema(operation_id="jobs_retrieve", responses={200: JobOut}, tags=["jobs"])
    def get(self, request: Request, job_id: str) -> Response:
        return Response(job_as_dict(job_get(actor=self.actor, job_id=job_id)))


class JobDownloadView(ApiView):
    @extend_schema(
        operation_id="jobs_download",
        summary="The ZIP a finished export produced",
        responses={
            (200, "application/zip"): OpenApiResponse(response=OpenApiTypes.BINARY),
        },
        tags=["jobs"],
    )
    def get(self, request: Request, job_id: str) -> HttpResponse:
        filename, data = job_output(actor=self.actor, job_id=job_id)
        return download_response(data, filename=filename, content_type="application/zip")

"""A revision's scan (docs/contract.md §21): JSON, SARIF 2.1.0, and an owner's override."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from skills_app.access import revision_for
from skills_app.api.views.base import ApiView
from skills_app.selectors.scans import revision_scan, revision_scan_sarif, scan_answer
from skills_app.services.scans import scan_override

SARIF_MEDIA_TYPE = "application/sarif+json"


class ScanOverrideIn(serializers.Serializer[dict[str, object]]):
    reason = serializers.CharField(max_length=2000, help_text="Why the owner lets it through.")


class RevisionScanView(ApiView):
    @extend_schema(
        operation_id="revisions_scan",
        summary="A revision's scan: verdict, findings by file and line, scanner version, override",
        responses={200: OpenApiTypes.OBJECT},
        tags=["revisions"],
    )
    def get(self, request: Request, revision_id: str) -> Response:
        return Response(revision_scan(actor=self.actor, revision_id=revision_id))


class RevisionScanSarifView(ApiView):
    @extend_schema(
        operation_id="revisions_scan_sarif",
        summary="A revision's scan as SARIF 2.1.0, for code-scanning tools",
        responses={200: OpenApiTypes.OBJECT},
        tags=["revisions"],
    )
    def get(self, request: Request, revision_id: str) -> Response:
        sarif = revision_scan_sarif(actor=self.actor, revision_id=revision_id)
        return Response(sarif, content_type=SARIF_MEDIA_TYPE)


class RevisionScanOverrideView(ApiView):
    @extend_schema(
        operation_id="revisions_scan_override",
        summary="An owner lets a blocked revision through the gate, with a reason (audited)",
        request=ScanOverrideIn,
        responses={200: OpenApiTypes.OBJECT},
        tags=["revisions"],
    )
    def post(self, request: Request, revision_id: str) -> Response:
        data = self.validated(ScanOverrideIn)
        actor = self.actor
        scan = scan_override(
            actor=actor, revision=revision_for(actor, revision_id), reason=data["reason"]
        )
        return Response(scan_answer(scan))

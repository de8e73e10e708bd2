"""The endpoints of the agent-side bridge ``@xmemo/skill`` (docs/contract.md §17): the sync
listing, a revision's bundle, and lint."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from skills_app.api.serializers import BundleOut, LintIn, LintOut, SyncOut
from skills_app.api.views.base import ApiView, if_none_match, not_modified
from skills_app.domain.canonical import sha256_hex
from skills_app.domain.json_bytes import encode_json
from skills_app.gateway.save_payload import save_payload_read
from skills_app.selectors.bridge import revision_bundle_document, sync_listing
from skills_app.services.save import lint_from_payload

SYNC_CACHE_CONTROL = "private, no-cache"
# The files never change, but the scan beside them does (pending, then its verdict, an
# override, a new scanner version): revalidated every time, the ETag names all of it.
BUNDLE_CACHE_CONTROL = "private, no-cache"
_NOT_MODIFIED = OpenApiResponse(description="Not modified (If-None-Match matched the ETag).")


def _json_with_etag(request: Request, body: bytes, etag: str, cache_control: str) -> HttpResponse:
    if if_none_match(request._request, etag):
        return not_modified(etag, cache_control)
    response = HttpResponse(body, content_type="application/json")
    response["ETag"] = etag
    response["Cache-Control"] = cache_control
    response["Vary"] = "Authorization, Cookie"
    return response


class SyncView(ApiView):
    @extend_schema(
        operation_id="sync",
        summary="Each skill's published revision, with its files (for sync)",
        parameters=[
            OpenApiParameter(
                "workspace",
                OpenApiTypes.STR,
                many=True,
                description="Only these workspaces (repeat the parameter); default: every "
                "workspace the token reads.",
            ),
            OpenApiParameter(
                "label",
                OpenApiTypes.STR,
                description="Serve each skill the revision this label points at; a skill "
                "without the label gets its published revision.",
            ),
        ],
        responses={200: SyncOut, 304: _NOT_MODIFIED},
        tags=["bridge"],
    )
    def get(self, request: Request) -> HttpResponse:
        listing = sync_listing(
            actor=self.actor,
            workspaces=request.query_params.getlist("workspace"),
            # Empty means "not given", as for Level 1's ``label``.
            label=request.query_params.get("label") or None,
        )
        return _json_with_etag(request, listing.body, listing.etag, SYNC_CACHE_CONTROL)


class RevisionBundleView(ApiView):
    @extend_schema(
        operation_id="revisions_bundle",
        summary="A revision's files as sync writes them, and its hashed fields",
        responses={200: BundleOut, 304: _NOT_MODIFIED},
        tags=["bridge"],
    )
    def get(self, request: Request, revision_id: str) -> HttpResponse:
        document = revision_bundle_document(actor=self.actor, revision_id=revision_id)
        body = encode_json(document)
        etag = f'"bundle-{document["revision_id"]}-{sha256_hex(body)[:16]}"'
        return _json_with_etag(request, body, etag, BUNDLE_CACHE_CONTROL)


class LintView(ApiView):
    @extend_schema(
        operation_id="skills_lint",
        summary="Check a save's body without storing anything",
        request=LintIn,
        responses={200: LintOut},
        tags=["skills"],
    )
    def post(self, request: Request) -> Response:
        read = save_payload_read(actor=self.actor, payload=request.data, workspace_required=False)
        return Response(lint_from_payload(actor=self.actor, read=read))

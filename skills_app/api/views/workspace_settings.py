"""A workspace's settings and write-only secrets (docs/contract.md §2, §7)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from skills_app.access import workspace_for
from skills_app.api.serializers import (
    SecretIn,
    SecretOut,
    WorkspaceOut,
    WorkspaceSettingsIn,
    page_of,
)
from skills_app.api.views.base import ApiView, page_response
from skills_app.api.views.skills import PAGE_PARAMS
from skills_app.selectors.accounts import workspace_as_dict
from skills_app.selectors.secrets import secret_as_dict, secret_list
from skills_app.services.workspace_settings import (
    workspace_secret_delete,
    workspace_secret_set,
    workspace_settings_update,
)


class WorkspaceDetailView(ApiView):
    @extend_schema(
        operation_id="workspaces_update",
        summary="Change a workspace's settings (owners and admins; audited)",
        request=WorkspaceSettingsIn,
        responses={200: WorkspaceOut},
        tags=["workspaces"],
    )
    def patch(self, request: Request, ws: str) -> Response:
        data = self.validated(WorkspaceSettingsIn)
        actor = self.actor
        workspace = workspace_settings_update(
            actor=actor, workspace=workspace_for(actor, ws, require_enabled=False), **data
        )
        return Response(workspace_as_dict(workspace, actor.role_in(workspace)))


class SecretListView(ApiView):
    @extend_schema(
        operation_id="workspaces_secrets_list",
        summary="The workspace's secrets: names and dates, never values (owners and admins)",
        parameters=PAGE_PARAMS,
        responses={200: page_of("SecretPage", SecretOut())},
        tags=["workspaces"],
    )
    def get(self, request: Request, ws: str) -> Response:
        actor = self.actor
        return page_response(
            secret_list(
                actor=actor,
                workspace=workspace_for(actor, ws, require_enabled=False),
                cursor=self.param("cursor"),
                limit=self.limit(),
            )
        )


class SecretDetailView(ApiView):
    @extend_schema(
        operation_id="workspaces_secrets_set",
        summary="Create or replace a secret; its value is never shown again",
        request=SecretIn,
        responses={200: SecretOut},
        tags=["workspaces"],
    )
    def put(self, request: Request, ws: str, name: str) -> Response:
        data = self.validated(SecretIn)
        actor = self.actor
        secret = workspace_secret_set(
            actor=actor,
            workspace=workspace_for(actor, ws, require_enabled=False),
            name=name,
            value=data["value"],
        )
        return Response(secret_as_dict(secret))

    @extend_schema(
        operation_id="workspaces_secrets_destroy",
        summary="Delete a secret",
        responses={204: None},
        tags=["workspaces"],
    )
    def delete(self, request: Request, ws: str, name: str) -> Response:
        actor = self.actor
        workspace_secret_delete(
            actor=actor, workspace=workspace_for(actor, ws, require_enabled=False), name=name
        )
        return Response(status=204)

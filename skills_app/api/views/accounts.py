"""Workspaces, members, the audit log and tokens (docs/contract.md §7)."""

from __future__ import annotations

from datetime import date

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from skills_app import errors
from skills_app.access import invitation_for, token_for, workspace_for
from skills_app.api.serializers import (
    AuditOut,
    InvitationIn,
    InvitationOut,
    MemberChangeIn,
    MemberIn,
    MemberOut,
    TokenCreatedOut,
    TokenIn,
    TokenOut,
    WorkspaceIn,
    WorkspaceOut,
    page_of,
)
from skills_app.api.views.base import ApiView, page_response
from skills_app.api.views.skills import PAGE_PARAMS
from skills_app.models import Membership
from skills_app.selectors.accounts import (
    AuditFilter,
    audit_list,
    member_as_dict,
    member_list,
    token_as_dict,
    token_list,
    workspace_as_dict,
    workspace_list,
)
from skills_app.selectors.invitations import invitation_as_dict, invitation_list
from skills_app.services.accounts import (
    membership_add,
    membership_change,
    membership_remove,
    token_create,
    token_revoke,
    workspace_create,
)
from skills_app.services.invitations import invitation_create, invitation_revoke


class WorkspaceListView(ApiView):
    @extend_schema(
        operation_id="workspaces_list",
        parameters=PAGE_PARAMS,
        responses={200: page_of("WorkspacePage", WorkspaceOut())},
        tags=["workspaces"],
    )
    def get(self, request: Request) -> Response:
        return page_response(
            workspace_list(actor=self.actor, cursor=self.param("cursor"), limit=self.limit())
        )

    @extend_schema(
        operation_id="workspaces_create",
        summary="Create a team workspace; you become its owner",
        request=WorkspaceIn,
        responses={201: WorkspaceOut},
        tags=["workspaces"],
    )
    def post(self, request: Request) -> Response:
        data = self.validated(WorkspaceIn)
        workspace = workspace_create(actor=self.actor, slug=data["slug"], name=data["name"])
        return Response(workspace_as_dict(workspace, Membership.Role.OWNER), status=201)


class MemberListView(ApiView):
    @extend_schema(
        operation_id="workspaces_members_list",
        parameters=PAGE_PARAMS,
        responses={200: page_of("MemberPage", MemberOut())},
        tags=["workspaces"],
    )
    def get(self, request: Request, ws: str) -> Response:
        actor = self.actor
        return page_response(
            member_list(
                actor=actor,
                workspace=workspace_for(actor, ws, require_enabled=False),
                cursor=self.param("cursor"),
                limit=self.limit(),
            )
        )

    @extend_schema(
        operation_id="workspaces_members_create",
        request=MemberIn,
        responses={201: MemberOut},
        tags=["workspaces"],
    )
    def post(self, request: Request, ws: str) -> Response:
        data = self.validated(MemberIn)
        actor = self.actor
        membership = membership_add(
            actor=actor,
            workspace=workspace_for(actor, ws, require_enabled=False),
            username=data["username"],
            role=data["role"],
        )
        return Response(member_as_dict(membership), status=201)


class MemberDetailView(ApiView):
    @extend_schema(
        operation_id="workspaces_members_update",
        request=MemberChangeIn,
        responses={200: MemberOut},
        tags=["workspaces"],
    )
    def patch(self, request: Request, ws: str, username: str) -> Response:
        data = self.validated(MemberChangeIn)
        actor = self.actor
        membership = membership_change(
            actor=actor,
            workspace=workspace_for(actor, ws, require_enabled=False),
            username=username,
            role=data["role"],
        )
        return Response(member_as_dict(membership))

    @extend_schema(
        operation_id="workspaces_members_destroy", responses={204: None}, tags=["workspaces"]
    )
    def delete(self, request: Request, ws: str, username: str) -> Response:
        actor = self.actor
        membership_remove(
            actor=actor,
            workspace=workspace_for(actor, ws, require_enabled=False),
            username=username,
        )
        return Response(status=204)


class AuditListView(ApiView):
    @extend_schema(
        operation_id="workspaces_audit_list",
        summary="The audit log, newest first (admins and owners)",
        parameters=[
            OpenApiParameter(
                "action",
                OpenApiTypes.STR,
                description="An action (skills.revision.approve) or a dotted prefix "
                "(skills.revision); skills.rev matches nothing.",
            ),
            OpenApiParameter(
                "actor", OpenApiTypes.STR, description="Who acted (case-insensitive)."
            ),
            OpenApiParameter("target", OpenApiTypes.STR, description="A target id, exactly."),
            OpenApiParameter(
                "since", OpenApiTypes.DATE, description="From this day on (YYYY-MM-DD)."
            ),
            OpenApiParameter(
                "until", OpenApiTypes.DATE, description="Up to this day, inclusive (YYYY-MM-DD)."
            ),
            *PAGE_PARAMS,
        ],
        responses={200: page_of("AuditPage", AuditOut())},
        tags=["workspaces"],
    )
    def get(self, request: Request, ws: str) -> Response:
        actor = self.actor
        return page_response(
            audit_list(
                actor=actor,
                workspace=workspace_for(actor, ws, require_enabled=False),
                filters=AuditFilter(
                    action=self.param("action") or "",
                    actor=self.param("actor") or "",
                    target=self.param("target") or "",
                    since=self._day("since"),
                    until=self._day("until"),
                ),
                cursor=self.param("cursor"),
                limit=self.limit(),
            )
        )

    def _day(self, name: str) -> date | None:
        value = self.param(name)
        if value is None:
            return None
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise errors.ValidationFailed(
                f"{name} must be a day as YYYY-MM-DD.", details={"field": name}
            ) from None


class TokenListView(ApiView):
    @extend_schema(
        operation_id="tokens_list",
        summary="Your tokens, or with ?workspace= the tokens that team owns (never secrets)",
        parameters=[
            OpenApiParameter(
                "workspace", OpenApiTypes.STR, description="A team: list its workspace tokens."
            ),
            *PAGE_PARAMS,
        ],
        responses={200: page_of("TokenPage", TokenOut())},
        tags=["tokens"],
    )
    def get(self, request: Request) -> Response:
        actor, ws = self.actor, self.param("workspace")
        return page_response(
            token_list(
                actor=actor,
                workspace=workspace_for(actor, ws, require_enabled=False) if ws else None,
                cursor=self.param("cursor"),
                limit=self.limit(),
            )
        )

    @extend_schema(
        operation_id="tokens_create",
        summary="Create a token; the secret is in this answer only",
        request=TokenIn,
        responses={201: TokenCreatedOut},
        tags=["tokens"],
    )
    def post(self, request: Request) -> Response:
        data = self.validated(TokenIn)
        actor = self.actor
        if actor.user is None:
            raise errors.PermissionDenied("Only a user can own tokens.")
        workspace = (
            workspace_for(actor, data["workspace"], require_enabled=False)
            if data["workspace"]
            else None
        )
        token, secret = token_create(
            actor=actor,
            user=actor.user,
            name=data["name"],
            scopes=data["scopes"],
            workspace=workspace,
            profile=data["profile"],
            expires_at=data["expires_at"],
            role=data["role"] if data["owner"] == "workspace" else "",
            permission_mode=data["permission_mode"],
        )
        listed = token_as_dict(token)
        answer = {
            "token_id": token.token_id,
            "token": secret,
            "name": token.name,
            "scopes": listed["scopes"],
            "workspace": listed["workspace"],
            "profile": token.client_profile,
            "expires_at": listed["expires_at"],
            "created_at": listed["created_at"],
            "owner": listed["owner"],
            "role": listed["role"],
            "permission_mode": listed["permission_mode"],
        }
        return Response(answer, status=201)


class TokenDetailView(ApiView):
    @extend_schema(
        operation_id="tokens_destroy",
        summary="Revoke a token (it stops working at once)",
        responses={204: None},
        tags=["tokens"],
    )
    def delete(self, request: Request, token_id: str) -> Response:
        actor = self.actor
        # The post_save signal drops the token from this process's auth cache at once.
        token_revoke(actor=actor, token=token_for(actor, token_id))
        return Response(status=204)


class InvitationListView(ApiView):
    @extend_schema(
        operation_id="workspaces_invitations_list",
        summary="The team's pending invitations (owners and admins)",
        parameters=PAGE_PARAMS,
        responses={200: page_of("InvitationPage", InvitationOut())},
        tags=["workspaces"],
    )
    def get(self, request: Request, ws: str) -> Response:
        actor = self.actor
        return page_response(
            invitation_list(
                actor=actor,
                workspace=workspace_for(actor, ws, require_enabled=False),
                cursor=self.param("cursor"),
                limit=self.limit(),
            )
        )

    @extend_schema(
        operation_id="workspaces_invitations_create",
        summary="Invite an e-mail address; the single-use link goes to that address only",
        request=InvitationIn,
        responses={201: InvitationOut},
        tags=["workspaces"],
    )
    def post(self, request: Request, ws: str) -> Response:
        data = self.validated(InvitationIn)
        actor = self.actor
        invitation = invitation_create(
            actor=actor,
            workspace=workspace_for(actor, ws, require_enabled=False),
            email=data["email"],
            role=data["role"],
            public_url=request.build_absolute_uri("/"),
        )
        return Response(invitation_as_dict(invitation), status=201)


class InvitationDetailView(ApiView):
    @extend_schema(
        operation_id="workspaces_invitations_destroy",
        summary="Revoke a pending invitation (its link stops working)",
        responses={204: None},
        tags=["workspaces"],
    )
    def delete(self, request: Request, ws: str, invitation_id: str) -> Response:
        actor = self.actor
        workspace = workspace_for(actor, ws, require_enabled=False)
        invitation_revoke(
            actor=actor,
            invitation=invitation_for(
                actor=actor, workspace=workspace, invitation_id=invitation_id
            ),
        )
        return Response(status=204)

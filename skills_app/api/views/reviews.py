"""The review conversation of a revision and the review e-mails one gets (docs/contract.md §16)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from skills_app.access import revision_for
from skills_app.api.serializers import (
    CommentIn,
    CommentOut,
    NotificationsIn,
    NotificationsOut,
    page_of,
)
from skills_app.api.views.base import ApiView, page_response
from skills_app.api.views.skills import PAGE_PARAMS
from skills_app.selectors.reviews import comment_as_dict, revision_comments
from skills_app.services.notifications import (
    notification_preferences,
    notification_preferences_as_dict,
    notification_preferences_update,
)
from skills_app.services.reviews import revision_comment_add


class RevisionCommentListView(ApiView):
    @extend_schema(
        operation_id="revisions_comments_list",
        summary="A revision's review conversation, oldest first",
        parameters=PAGE_PARAMS,
        responses={200: page_of("CommentPage", CommentOut())},
        tags=["revisions"],
    )
    def get(self, request: Request, revision_id: str) -> Response:
        return page_response(
            revision_comments(
                actor=self.actor,
                revision_id=revision_id,
                cursor=self.param("cursor"),
                limit=self.limit(),
            )
        )

    @extend_schema(
        operation_id="revisions_comments_create",
        summary="Comment on a revision, optionally on one line of its body (members)",
        request=CommentIn,
        responses={201: CommentOut},
        tags=["revisions"],
    )
    def post(self, request: Request, revision_id: str) -> Response:
        data = self.validated(CommentIn)
        actor = self.actor
        comment = revision_comment_add(
            actor=actor,
            revision=revision_for(actor, revision_id),
            body=data["body"],
            line=data["line"],
        )
        return Response(comment_as_dict(comment), status=201)


class NotificationsView(ApiView):
    @extend_schema(
        operation_id="notifications_retrieve",
        summary="Which review e-mails you get",
        responses={200: NotificationsOut},
        tags=["notifications"],
    )
    def get(self, request: Request) -> Response:
        return Response(
            notification_preferences_as_dict(notification_preferences(actor=self.actor))
        )

    @extend_schema(
        operation_id="notifications_update",
        summary="Switch kinds of review e-mail on or off (audited)",
        request=NotificationsIn,
        responses={200: NotificationsOut},
        tags=["notifications"],
    )
    def patch(self, request: Request) -> Response:
        preference = notification_preferences_update(
            actor=self.actor, changes=self.validated(NotificationsIn)
        )
        return Response(notification_preferences_as_dict(preference))

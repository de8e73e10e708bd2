"""A skill's labels (docs/contract.md §18): list, move (create), remove."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from skills_app.access import skill_for
from skills_app.api.serializers import LabelIn, LabelOut
from skills_app.api.views.base import ApiView
from skills_app.selectors.labels import label_as_dict, label_list
from skills_app.services.labels import label_delete, label_move


class LabelListView(ApiView):
    @extend_schema(
        operation_id="skills_labels_list",
        summary="A skill's labels: which revision each points at, who moved it and when",
        responses={200: LabelOut(many=True)},
        tags=["skills"],
    )
    def get(self, request: Request, skill_id: str) -> Response:
        return Response(label_list(actor=self.actor, skill_id=skill_id))


class LabelDetailView(ApiView):
    @extend_schema(
        operation_id="skills_labels_set",
        summary="Point a label at a revision (skills:review; in a team, owners and admins)",
        request=LabelIn,
        responses={200: LabelOut},
        tags=["skills"],
    )
    def put(self, request: Request, skill_id: str, name: str) -> Response:
        data = self.validated(LabelIn)
        actor = self.actor
        label = label_move(
            actor=actor,
            skill=skill_for(actor, skill_id),
            name=name,
            revision_id=data["revision_id"],
        )
        return Response(label_as_dict(label))

    @extend_schema(
        operation_id="skills_labels_destroy",
        summary="Remove a label",
        responses={204: None},
        tags=["skills"],
    )
    def delete(self, request: Request, skill_id: str, name: str) -> Response:
        actor = self.actor
        label_delete(actor=actor, skill=skill_for(actor, skill_id), name=name)
        return Response(status=204)

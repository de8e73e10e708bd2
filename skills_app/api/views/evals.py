"""Trigger checks and outcomes of a revision (docs/contract.md §22)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from skills_app.api.serializers import OutcomeReportOut, RevisionEvalsOut
from skills_app.api.views.base import ApiView
from skills_app.errors import ValidationFailed
from skills_app.selectors.evals import revision_evals
from skills_app.services.outcomes import outcome_report


class OutcomeIn(serializers.Serializer[dict[str, object]]):
    """The request's schema; the rules are the domain's (``outcome_check``)."""

    outcome = serializers.ChoiceField(choices=["success", "partial", "failure"])
    note = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)


class RevisionEvalsView(ApiView):
    @extend_schema(
        operation_id="revisions_evals",
        summary="A revision's trigger checks: recall at 1 and 3, false triggers, collisions",
        responses={200: RevisionEvalsOut},
        tags=["revisions"],
    )
    def get(self, request: Request, revision_id: str) -> Response:
        return Response(revision_evals(actor=self.actor, revision_id=revision_id))


class RevisionOutcomeView(ApiView):
    @extend_schema(
        operation_id="revisions_outcomes_create",
        summary="Report how a use of the revision went (one counted per token per day)",
        request=OutcomeIn,
        responses={202: OutcomeReportOut},
        tags=["revisions"],
    )
    def post(self, request: Request, revision_id: str) -> Response:
        data = request.data
        if not isinstance(data, dict):
            raise ValidationFailed("The request body must be a JSON object.")
        unknown = sorted(set(data) - {"outcome", "note"})
        if unknown:
            raise ValidationFailed(
                f"The field {unknown[0]!r} is not known here.", details={"field": unknown[0]}
            )
        answer = outcome_report(
            actor=self.actor,
            revision_id=revision_id,
            outcome=data.get("outcome"),
            note=data.get("note"),
        )
        return Response(answer, status=202)

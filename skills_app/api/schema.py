"""OpenAPI details drf-spectacular cannot guess: the bearer scheme and the error envelope that
every operation may answer (docs/contract.md §7)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema

from skills_app.api.serializers import ErrorEnvelope

# Statuses any authenticated operation can answer with the envelope.
COMMON_ERRORS = ("400", "401", "403", "404", "429")
WRITE_ERRORS = ("409", "413", "415")


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "skills_app.api.auth.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "xm_…",
            "description": "An API token: `Authorization: Bearer xm_…`.",
        }


class XmemoAutoSchema(AutoSchema):
    """Adds the error envelope to every operation's documented responses, and names components
    without the code's ``In``/``Out`` suffixes (requests get drf-spectacular's ``Request``)."""

    def get_serializer_name(self, serializer: Any, direction: Any) -> str:
        name: str = super().get_serializer_name(serializer, direction)
        for suffix in ("Out", "In"):
            if name.endswith(suffix) and len(name) > len(suffix):
                return name[: -len(suffix)]
        return name

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        codes = list(COMMON_ERRORS)
        if self.method in ("POST", "PUT", "PATCH", "DELETE"):
            codes += WRITE_ERRORS
        codes.append("405")
        for code in codes:
            if code not in responses:
                responses[code] = self._get_response_for_code(
                    ErrorEnvelope, code, direction=direction
                )
        return responses

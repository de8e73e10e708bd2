"""The error envelope every door answers a failure with (docs/contract.md §7)."""

from typing import Annotated, TypedDict

from skills_app.domain.shapes.fields import Doc, JSONObject


class ErrorBody(TypedDict):
    code: Annotated[str, Doc("UPPER_SNAKE error code (docs/contract.md §7).")]
    message: str
    details: JSONObject


class ErrorEnvelope(TypedDict):
    error: ErrorBody

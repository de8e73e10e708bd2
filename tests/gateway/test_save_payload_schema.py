"""The contract's ``save_cloud_skill`` input schema is what the one save validator accepts."""

from __future__ import annotations

from typing import Any

from skills_app.gateway.save_payload import save_input_shape
from skills_app.mcp_profiles import tool_spec


def _without_prose(schema: Any) -> Any:
    if isinstance(schema, dict):
        # A "description" keyword is prose (a string); the property named so is a schema.
        return {
            key: _without_prose(value)
            for key, value in schema.items()
            if not (key == "description" and isinstance(value, str))
        }
    if isinstance(schema, list):
        return [_without_prose(item) for item in schema]
    return schema


def test_the_contract_schema_is_the_validators_shape() -> None:
    schema = tool_spec("save_cloud_skill")["input_schema"]
    assert _without_prose(schema) == save_input_shape()

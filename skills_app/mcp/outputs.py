"""The tools' ``outputSchema`` (docs/contract.md §18), built from the shapes their answers have
(``domain.shapes``): a member added to a shape reaches the schema the clients check."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from skills_app.domain import shapes
from skills_app.domain.shapes.json_schema import shape_schema
from skills_app.mcp_profiles import tool_spec

# The tool → the shape of its answer.
OUTPUT_SHAPES: Mapping[str, type] = {
    "save_cloud_skill": shapes.Save,
    "report_skill_outcome": shapes.OutcomeReport,
}
# recall_cloud_skill answers one of three documents, told apart by ``kind``.
RECALL_DOCUMENTS = (shapes.RecallSearch, shapes.RecallRoot, shapes.RecallResource)


@cache
def _recall_schema() -> dict[str, Any]:
    documents = [shape_schema(document) for document in RECALL_DOCUMENTS]
    return {
        "type": "object",
        "description": "The GET /v1/recall answer: kind 'search' (data.results), 'root' (a "
        "skill's instructions, its revision_id, labels and resource manifest) or 'resource' "
        "(one component; content in data.encoding).",
        "properties": {
            "kind": {
                "type": "string",
                "enum": [doc["properties"]["kind"]["enum"][0] for doc in documents],
            },
            "data": {"anyOf": [doc["properties"]["data"] for doc in documents]},
        },
        "required": ["kind", "data"],
    }


@cache
def _shaped(name: str) -> dict[str, Any]:
    return shape_schema(OUTPUT_SHAPES[name])


def output_schema(name: str) -> Mapping[str, Any] | None:
    """The ``outputSchema`` of tool ``name``: its answer's shape, else what the contract says."""
    if name == "recall_cloud_skill":
        return _recall_schema()
    if name in OUTPUT_SHAPES:
        return _shaped(name)
    schema: Mapping[str, Any] | None = tool_spec(name).get("output_schema")
    return schema

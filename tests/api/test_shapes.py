"""One home per shape (docs/architecture.md): each TypedDict of ``domain/shapes`` is the OpenAPI
component of its name, the MCP tools' ``outputSchema``, and the keys REST and MCP answer — so a
member added to a shape reaches all of them, and none can drift apart."""

from __future__ import annotations

from typing import Annotated, NotRequired, TypedDict, get_args

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers

from skills_app.api.serializers import serializer_for
from skills_app.domain import shapes
from skills_app.domain.evals import Figures
from skills_app.domain.shapes.fields import DateTime, Doc
from skills_app.domain.shapes.json_schema import shape_schema
from skills_app.domain.shapes.reading import fields_of
from skills_app.mcp.outputs import OUTPUT_SHAPES, RECALL_DOCUMENTS, output_schema
from skills_app.mcp.tools import tool_run
from skills_app.models import Job, Skill, SkillRevision, Workspace
from tests.api.conftest import ApiFactory
from tests.factories import Env, actor_for

# Shapes that are no component of their own: a union, a generic page, a free-form alias, the
# part of SkillDiff the console reads alone.
NOT_COMPONENTS = {"RecallAnswer", "PageOf", "JSONObject", "RevisionPairDiff"}


@pytest.fixture(scope="module")
def components() -> dict:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return schema["components"]["schemas"]


def _shapes() -> list[type]:
    return [getattr(shapes, name) for name in shapes.__all__ if name not in NOT_COMPONENTS]


@pytest.mark.parametrize("shape", _shapes(), ids=lambda shape: shape.__name__)
def test_every_shape_is_the_openapi_component_of_its_name(components: dict, shape: type) -> None:
    component = components[shape.__name__]
    fields = fields_of(shape)
    assert list(component["properties"]) == list(fields)
    assert sorted(component.get("required", [])) == sorted(
        name for name, field in fields.items() if field.required
    )


def test_the_mcp_output_schemas_are_the_shapes() -> None:
    for name, shape in OUTPUT_SHAPES.items():
        schema = output_schema(name)
        assert schema is not None
        assert list(schema["properties"]) == list(fields_of(shape))
    recall = output_schema("recall_cloud_skill")
    assert recall is not None
    assert recall["required"] == ["kind", "data"]
    datas = recall["properties"]["data"]["anyOf"]
    for document, data in zip(RECALL_DOCUMENTS, datas, strict=True):
        inner = fields_of(document)["data"].shape
        assert inner is not None
        assert list(data["properties"]) == list(fields_of(inner))


def test_a_member_added_to_a_shape_reaches_openapi_and_mcp() -> None:
    class Probe(TypedDict):
        """A probe."""

        name: str

    class Grown(Probe):
        added: Annotated[DateTime | None, Doc("New.")]
        later: NotRequired[list[int]]

    made = serializer_for(Grown)()
    assert list(made.fields) == ["name", "added", "later"]
    assert isinstance(made.fields["added"], serializers.DateTimeField)
    assert made.fields["added"].allow_null
    assert made.fields["added"].help_text == "New."
    assert not made.fields["later"].required
    schema = shape_schema(Grown)
    assert schema["required"] == ["name", "added"]
    assert schema["properties"]["added"] == {
        "anyOf": [
            {"type": "string", "format": "date-time", "description": "New."},
            {"type": "null"},
        ]
    }


def test_the_shapes_choices_are_the_models() -> None:
    fields = fields_of(shapes.Skill)
    assert fields["scope"].choices == tuple(Workspace.Kind.values)
    assert fields["status"].choices == tuple(Skill.Status.values)
    revision = fields_of(shapes.Revision)
    assert revision["state"].choices == tuple(SkillRevision.State.values)
    assert revision["source"].choices == tuple(SkillRevision.Source.values)
    job = fields_of(shapes.Job)
    assert job["kind"].choices == tuple(Job.Kind.values)
    assert job["state"].choices == tuple(Job.State.values)


def test_rest_and_mcp_answer_a_save_with_the_shapes_keys(env: Env, api_for: ApiFactory) -> None:
    payload = {
        "workspace": env.personal.slug,
        "slug": "deploy",
        "name": "Deploy",
        "description": "How to deploy.",
        "instruction_body": "# Deploy\n",
    }
    rest = api_for(env.owner).post("/v1/skills/save", payload)
    assert rest.status_code == 201, rest.content
    keys = set(fields_of(shapes.Save))
    assert set(rest.json()) == keys
    answer = tool_run(
        name="save_cloud_skill",
        actor=actor_for(env.owner, via="mcp"),
        arguments={**payload, "slug": "deploy-2"},
    )
    assert set(answer) == keys
    assert get_args(shapes.RecallAnswer) == RECALL_DOCUMENTS


def test_the_evals_answer_holds_every_figure_and_no_other() -> None:
    """``RevisionEvals`` lists ``domain.evals.Figures``' members again (each optional: absent
    until the checks are done), so a figure added to one must be added to the other."""
    members = fields_of(shapes.RevisionEvals)
    assert list(members) == ["state", *fields_of(Figures), "served_set"]
    assert [name for name, field in members.items() if field.required] == ["state"]
    figures = fields_of(Figures)
    assert all(members[name].kind == figures[name].kind for name in figures)

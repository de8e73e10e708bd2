"""Schemathesis against /v1/schema: no 5xx, and every answer conforms to the documented schema.

The schema is loaded from the WSGI app inside the test database (pytest-django), with real
users, skills, revisions and components in it. Generated path parameters are sometimes swapped
for real ids, so the success paths are exercised and checked too, not only the 404s. Bounded:
a few examples per operation, well under two minutes; in CI this runs on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import hypothesis
import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from skills_app.gateway.auth import clear_token_cache
from skills_app.services.skills import revision_transition
from tests.api.conftest import reset_api_caches
from tests.factories import actor_for, build_env, component, make_token, publish, save

MAX_EXAMPLES = 15

# Loaded once at collection (the schema view needs no database); per-test data goes into
# ``_state`` from the fixture below and the hook reads it while generating.
schema = schemathesis.openapi.from_wsgi("/v1/schema", get_wsgi_application())
_state: dict[str, Any] = {"auth": {}, "real": {}}


@schema.hook
def flatmap_path_parameters(context: Any, path_parameters: dict[str, Any]) -> Any:
    """Half the time, swap generated ids for real ones, so success paths get checked too."""
    real = _state["real"]
    if not path_parameters:
        return st.just(path_parameters)
    swapped = {
        key: st.sampled_from(real[key]) if real.get(key) else st.just(value)
        for key, value in path_parameters.items()
    }
    return st.one_of(st.just(path_parameters), st.fixed_dictionaries(swapped))


@pytest.fixture
def api_data(db: None) -> Iterator[None]:
    # The WSGI app is called directly, not through Django's test client, so do what the client
    # does: keep request signals from closing the connection that holds the test transaction.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        _populate()
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _populate() -> None:
    reset_api_caches()
    env = build_env()
    live = publish(
        env.owner,
        env.team,
        slug="deploy",
        frontmatter={"argument-names": ["service"]},
        components=(
            component("refs/guide.md", "# Guide"),
            component("a.bin", b"\x00\x01", "artifact"),
        ),
    ).revision
    proposed = save(
        env.member, env.team, slug="deploy", instruction_body="v2", intent="publish"
    ).revision
    draft = save(env.owner, env.personal, slug="notes").revision
    other = save(env.owner, env.personal, slug="old").revision
    revision_transition(actor=actor_for(env.owner), revision=other, action="publish")
    spare, _ = make_token(env.owner, name="spare")
    _, secret = make_token(env.owner, name="schemathesis")
    _state["auth"] = {"Authorization": f"Bearer {secret}"}
    _state["real"] = {
        "skill_id": [live.skill.skill_id, draft.skill.skill_id],
        "revision_id": [live.revision_id, proposed.revision_id, draft.revision_id],
        "ws": [env.team.slug, env.personal.slug],
        "username": [env.member.username, env.admin.username],
        "token_id": [spare.token_id],
        "logical_path": ["refs/guide.md", "a.bin"],
    }


@schema.parametrize()
@hypothesis.settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(hypothesis.HealthCheck),
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
)
def test_api_conforms_to_its_schema(case: Any, api_data: None) -> None:
    clear_token_cache()  # a revoked/edited token is never served from a stale entry
    case.call_and_validate(
        headers=dict(_state["auth"]),
        checks=[not_a_server_error, response_schema_conformance],
    )

"""A 304 never hides a change (docs/contract.md §5): the recall ETag stands for the whole answer.

An agent that keeps each answer with its ETag and revalidates with ``If-None-Match`` walks a
revision through its lifecycle. After every step, for every request it has cached, the server
may answer 304 only if the answer it would send now is exactly the one the agent holds; and a
request whose answer did not change still gets its 304.
"""

from __future__ import annotations

from typing import Any

import pytest

from skills_app.models import RevisionScan, SkillRevision
from skills_app.services.scans import scans_catch_up
from skills_app.services.skills import revision_transition
from tests.api.conftest import Api, ApiFactory
from tests.api.test_scans import INJECTED
from tests.factories import Env, actor_for, component, publish, save

RECALL = "/v1/recall"


class CachingAgent:
    """Keeps (ETag, body) per request, revalidates, and checks every 304 against the truth."""

    def __init__(self, api: Api) -> None:
        self.api = api
        self.held: dict[tuple[tuple[str, str], ...], tuple[str, Any]] = {}

    def revalidate(self, **params: str) -> str:
        """'304', '200' (changed or new) or the error status; asserts no stale 304."""
        key = tuple(sorted(params.items()))
        truth = self.api.get(RECALL, params)
        held = self.held.get(key)
        outcome = str(truth.status_code)
        if held is not None:
            conditional = self.api.get(RECALL, params, **{"If-None-Match": held[0]})
            if conditional.status_code == 304:
                assert truth.status_code == 200
                assert truth.json() == held[1], f"stale 304 for {params}"
                assert conditional.content == b""
                outcome = "304"
            else:
                assert conditional.status_code == truth.status_code
                assert truth.status_code != 200 or truth.json() != held[1], (
                    f"an unchanged answer lost its 304 for {params}"
                )
        if truth.status_code == 200:
            self.held[key] = (truth["ETag"], truth.json())
        else:
            self.held.pop(key, None)
        return outcome


def _act(user: Any, revision: SkillRevision, action: str) -> SkillRevision:
    return revision_transition(actor=actor_for(user), revision=revision, action=action)


def test_personal_draft_published_then_deprecated(env: Env, api_for: ApiFactory) -> None:
    rev = save(env.owner, env.personal, components=(component("r.md", "ref"),)).revision
    agent = CachingAgent(api_for(env.owner))
    requests: list[dict[str, str]] = [
        {"slug": "deploy"},
        {"slug": "deploy", "arguments": "prod"},
        {"slug": "deploy", "revision_id": rev.revision_id},
        {"slug": "deploy", "revision_id": rev.revision_id, "arguments": "prod"},
        {"slug": "deploy", "revision_id": rev.revision_id, "resource": "r.md"},
    ]

    def walk() -> list[str]:
        return [agent.revalidate(**params) for params in requests]

    assert walk() == ["200"] * 5
    assert walk() == ["304"] * 5  # nothing changed: every answer revalidates
    _act(env.owner, rev, "publish")  # draft → published: state and resolved_by change
    assert walk() == ["200", "200", "200", "200", "304"]
    assert walk() == ["304"] * 5
    _act(env.owner, rev, "deprecate")
    assert walk() == ["404", "404", "200", "200", "304"]


def test_team_proposal_approved_then_superseded(env: Env, api_for: ApiFactory) -> None:
    first = save(env.member, env.team, intent="publish", instruction_body="One $1.").revision
    agent = CachingAgent(api_for(env.member2))
    slug = f"{env.team.slug}/deploy"
    requests: list[dict[str, str]] = [
        {"slug": slug},
        {"slug": slug, "arguments": "x"},
        {"slug": slug, "revision_id": first.revision_id},
        {"slug": slug, "revision_id": first.revision_id, "arguments": "x"},
    ]

    def walk() -> list[str]:
        return [agent.revalidate(**params) for params in requests]

    assert walk() == ["404", "404", "200", "200"]
    assert walk() == ["404", "404", "304", "304"]
    first = _act(env.admin, first, "approve")  # proposed → published
    assert walk() == ["200", "200", "200", "200"]
    assert walk() == ["304"] * 4
    second = save(env.member, env.team, intent="publish", instruction_body="Two $1.").revision
    assert walk() == ["304"] * 4  # a proposal changes nothing agents get
    _act(env.admin, second, "approve")  # first is now deprecated
    assert walk() == ["200", "200", "200", "200"]
    assert (
        agent.held[(("revision_id", first.revision_id), ("slug", slug))][1]["data"]["state"]
        == "deprecated"
    )


def test_the_same_content_in_two_skills_does_not_share_an_etag(
    env: Env, api_for: ApiFactory
) -> None:
    """Identical content (one canonical hash) in two skills: different answers, so different
    ETags — a tag taken from one can never revalidate the other."""
    a = publish(env.owner, env.personal, slug="alpha").revision
    b = publish(env.owner, env.personal, slug="beta").revision
    assert a.canonical_hash == b.canonical_hash
    api = api_for(env.owner)
    tag_a = api.get(RECALL, {"slug": "alpha"})["ETag"]
    tag_b = api.get(RECALL, {"slug": "beta"})["ETag"]
    assert tag_a != tag_b
    assert api.get(RECALL, {"slug": "beta"}, **{"If-None-Match": tag_a}).status_code == 200


def _scan_walk(agent: CachingAgent, revision: SkillRevision) -> list[str]:
    requests = ({"slug": "deploy"}, {"slug": "deploy", "revision_id": revision.revision_id})
    return [agent.revalidate(**params) for params in requests]


def test_a_finished_scan_changes_the_answer_and_its_etag(env: Env, api_for: ApiFactory) -> None:
    rev = save(env.owner, env.personal, instruction_body=INJECTED).revision
    api = api_for(env.owner)
    agent = CachingAgent(api)
    assert _scan_walk(agent, rev) == ["200", "200"]
    assert api.get(RECALL, {"slug": "deploy"}).json()["data"]["scan"] == {
        "verdict": "pending",
        "findings": [],
        "scanner_version": None,
    }
    assert _scan_walk(agent, rev) == ["304", "304"]
    scans_catch_up()  # pending → block
    assert _scan_walk(agent, rev) == ["200", "200"]
    scan = api.get(RECALL, {"slug": "deploy"}).json()["data"]["scan"]
    assert set(scan) == {"verdict", "findings", "scanner_version"}  # contract §21, exactly
    assert scan["verdict"] == "block"
    assert scan["findings"][0]["category"] == "prompt_injection"


@pytest.mark.django_db(transaction=True)
def test_a_stored_scan_changes_the_cached_answer_and_an_override_does_not(
    env: Env, api_for: ApiFactory
) -> None:
    """With the resolution caches in force (no test transaction), a stored scan moves the
    generation: the next answer carries it under a new ETag. An override is no part of Level 1's
    ``scan`` (contract §21: ``{verdict, findings, scanner_version}``): the answer stays."""
    rev = save(env.owner, env.personal, instruction_body=INJECTED).revision
    scans_catch_up()
    api = api_for(env.owner)
    agent = CachingAgent(api)
    assert _scan_walk(agent, rev) == ["200", "200"]
    assert _scan_walk(agent, rev) == ["304", "304"]
    # As an older scanner left it; the rescan of the current version stores block again.
    RevisionScan.objects.filter(revision=rev).update(
        scanner_version="xmemo-scan/0", verdict="clean", findings=[]
    )
    assert _scan_walk(agent, rev) == ["200", "200"]
    assert api.get(RECALL, {"slug": "deploy"}).json()["data"]["scan"]["verdict"] == "clean"
    assert scans_catch_up() == 1
    assert _scan_walk(agent, rev) == ["200", "200"]
    assert api.get(RECALL, {"slug": "deploy"}).json()["data"]["scan"]["verdict"] == "block"
    done = api.post(f"/v1/revisions/{rev.revision_id}/scan/override", {"reason": "Read it."})
    assert done.status_code == 200, done.content
    assert _scan_walk(agent, rev) == ["304", "304"]
    override = api.get(f"/v1/revisions/{rev.revision_id}/scan").json()["override"]
    assert override["reason"] == "Read it."

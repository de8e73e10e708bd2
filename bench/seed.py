"""Deterministic bench content, bulk-inserted with the same invariants the services keep.

Going through ``skill_save`` for 100,000 skills would take hours, so rows are inserted in bulk
(PostgreSQL's ``COPY``) — but every value is what the services would have written: canonical
hashes from ``domain.canonical``, content-addressed blobs, gap-free revision numbers, exactly one
published revision, and the pointers and search columns of ``services.skills._refresh_pointers``.
Rows are only ever inserted, never updated, and every trigger but the vocabulary's stays on.
Seeding is incremental: skill ``i`` is always the same, and a larger N only adds the missing ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


def _words(text: str) -> list[str]:
    return text.split()


SYLLABLES = _words(
    "ka lo mi ne ru sa ti vo ze pa de fi gu ho ja ki le mo nu pe qui ra si to "
    "va wo xe yu zo bra cle dri fro gla ple sta tri"
)
TOPIC_WORDS = _words(
    "deploy rollback incident postmortem review release canary migration database backup "
    "restore monitor alert triage security audit compliance onboarding checklist runbook "
    "kubernetes terraform docker pipeline testing coverage lint format schema api latency "
    "cache queue worker cron billing invoice refund customer support escalation oncall "
    "pager outage capacity scaling budget forecast report dashboard metrics logging tracing"
)
TEAM_SLUG = "bench-team"
USERNAME = "bench"
REVISIONS_PER_SKILL = 3
COMPONENTS_PER_REVISION = 4
# The labels on the published revision of every labelled skill (the odd-numbered half): Level 1
# of those skills beside Level 1 of the other half, otherwise the same content, is what labels
# cost recall (docs/contract.md §18).
LABELS = ("canary", "production", "staging")


def _vocabulary() -> list[str]:
    rng = random.Random(7)
    words = set(TOPIC_WORDS)
    while len(words) < 2000:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


VOCABULARY = _vocabulary()


@dataclass(frozen=True)
class SkillContent:
    slug: str
    name: str
    description: str
    bodies: tuple[str, ...]  # one per revision
    components: tuple[tuple[tuple[str, str, bytes], ...], ...]  # per revision: (path, type, bytes)


def skill_content(index: int, revisions: int = REVISIONS_PER_SKILL) -> SkillContent:
    rng = random.Random(index)
    topic = rng.sample(TOPIC_WORDS, 3)
    name = " ".join(w.capitalize() for w in topic) + f" {index}"
    description = (
        f"Use when you need to {topic[0]} the {topic[1]} with {topic[2]}: "
        + " ".join(rng.choice(VOCABULARY) for _ in range(18))
        + "."
    )
    bodies = []
    components = []
    base_files = [
        (f"references/{topic[0]}-guide.md", "reference"),
        (f"templates/{topic[1]}.md", "template"),
        ("examples/example-1.md", "example"),
        ("scripts/check.py", "script"),
    ][:COMPONENTS_PER_REVISION]
    for rev in range(revisions):
        paragraphs = []
        for p in range(8):
            words = " ".join(rng.choice(VOCABULARY) for _ in range(28))
            paragraphs.append(f"{p + 1}. {topic[p % 3].capitalize()} step: {words}.")
        bodies.append(f"# {name}\n\nArguments: $ARGUMENTS\n\n" + "\n".join(paragraphs) + "\n")
        files = []
        for f_index, (path, ctype) in enumerate(base_files):
            # Only the first file changes between revisions: the others are shared blobs.
            version = rev if f_index == 0 else 0
            seed = f"{index}:{path}:{version}"
            text = "\n".join(
                f"{hashlib.sha256(f'{seed}:{line}'.encode()).hexdigest()} {rng.choice(VOCABULARY)}"
                for line in range(20)
            )
            files.append((path, ctype, text.encode()))
        components.append(tuple(files))
    return SkillContent(
        slug=f"skill-{index:06d}",
        name=name,
        description=description,
        bodies=tuple(bodies),
        components=tuple(components),
    )


def level1_sized_document() -> dict[str, Any]:
    """A document with the shape and size of a seeded skill's Level 1 answer."""
    content = skill_content(0)
    return {
        "kind": "root",
        "data": {
            "skill_id": "skill_00000000000000000000",
            "slug": content.slug,
            "workspace": TEAM_SLUG,
            "name": content.name,
            "description": content.description,
            "revision_id": "rev_00000000000000000000",
            "revision_number": 2,
            "state": "published",
            "canonical_hash": "0" * 64,
            "frontmatter": {"license": "MIT", "metadata": {"bench": True}},
            "instruction_body": content.bodies[1],
            "resolved_by": "published",
            "resources": [
                {
                    "logical_path": path,
                    "type": ctype,
                    "content_hash": hashlib.sha256(data).hexdigest(),
                    "size": len(data),
                    "media_type": "text/markdown",
                }
                for path, ctype, data in content.components[1]
            ],
        },
    }


def ensure_account() -> tuple[Any, Any]:
    """The bench user, their team workspace and a fresh full-scope token secret."""
    from skills_app.access import Actor
    from skills_app.models import Membership, Workspace
    from skills_app.services.accounts import token_create, user_create

    user = user_create(username=USERNAME)  # signs in with tokens only: no password
    team, _ = Workspace.objects.get_or_create(
        slug=TEAM_SLUG, defaults={"name": "Bench team", "kind": "team", "created_by": user}
    )
    Membership.objects.get_or_create(workspace=team, user=user, defaults={"role": "owner"})
    _, secret = token_create(
        actor=Actor(user=user, via="cli"),
        user=user,
        name="bench",
        scopes=["skills:read", "skills:write"],
    )
    return team, secret


def seed(total: int, *, revisions: int = REVISIONS_PER_SKILL, progress: Any = print) -> int:
    """Make sure skills 0..total-1 exist in the bench team; returns how many were added."""
    from django.db import transaction

    from skills_app.models import Skill, Workspace

    team = Workspace.objects.get(slug=TEAM_SLUG)
    existing = Skill.objects.filter(workspace=team).count()
    added = 0
    with _vocabulary_counted_once():
        for start in range(existing, total, BATCH):
            stop = min(total, start + BATCH)
            with transaction.atomic():
                _seed_batch(team, range(start, stop), revisions)
            added += stop - start
            progress(f"  seeded {stop:,} / {total:,} skills")
    return added


# Skills per transaction: with the vocabulary trigger off (below) nothing makes a large
# transaction slower, and each one's deferred checks run at its commit.
BATCH = 2000


@contextlib.contextmanager
def _vocabulary_counted_once() -> Iterator[None]:
    """On PostgreSQL, the vocabulary trigger (migration 0014) off while skills are loaded, the
    counts taken once after: a trigger that upserts each row's 100-200 words made loading
    100,000 skills take hours on a busy machine."""
    from django.db import connection

    if connection.vendor != "postgresql":
        yield
        return
    from skills_app.migrations import _search

    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE skills_app_skill DISABLE TRIGGER xmemo_search_terms")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            for sql in _search.VOCABULARY:
                cursor.execute(sql)
            cursor.execute("ALTER TABLE skills_app_skill ENABLE TRIGGER xmemo_search_terms")


def _seed_batch(team: Any, indexes: range, revisions: int) -> None:
    """Skills ``indexes`` of the bench content in ``team``, each inserted whole: its row already
    pointing at its revisions (their ids taken from the sequence first; the foreign keys are
    checked at commit), then the revisions, the blobs and the components."""
    from django.utils import timezone

    from skills_app.domain.canonical import canonical_hash, sha256_hex
    from skills_app.domain.context_cost import revision_tokens
    from skills_app.domain.paths import guess_media_type
    from skills_app.domain.search_text import search_columns
    from skills_app.models import Blob, Skill, SkillComponent, SkillRevision

    owner = team.created_by
    contents = [skill_content(i, revisions) for i in indexes]
    skill_ids = _next_ids(Skill, len(contents))
    revision_ids = iter(_next_ids(SkillRevision, len(contents) * revisions))
    now = timezone.now()
    published_number = max(1, revisions - 1)
    frontmatter = {"license": "MIT", "metadata": {"bench": True}}
    skills: list[Skill] = []
    rev_rows: list[SkillRevision] = []
    blob_data: dict[str, bytes] = {}
    comp_specs: list[tuple[int, str, str, str, int, str]] = []  # revision pk, path, ...
    for skill_pk, content in zip(skill_ids, contents, strict=True):
        own: list[SkillRevision] = []
        for number in range(1, revisions + 1):
            revision_pk = next(revision_ids)
            files = content.components[number - 1]
            rows = [(path, ctype, sha256_hex(data)) for path, ctype, data in files]
            manifest = []
            for (path, ctype, data), (_, _, sha) in zip(files, rows, strict=True):
                blob_data[sha] = data
                media_type = guess_media_type(path, data)
                comp_specs.append((revision_pk, path, ctype, sha, len(data), media_type))
                manifest.append((path, ctype, sha, len(data), media_type))
            if number < published_number:
                state = "deprecated"
            elif number == published_number:
                state = "published"
            else:
                state = "draft"
            body = content.bodies[number - 1]
            own.append(
                SkillRevision(
                    pk=revision_pk,
                    skill_id=skill_pk,
                    workspace=team,
                    revision_number=number,
                    state=state,
                    name=content.name,
                    description=content.description,
                    frontmatter=frontmatter,
                    instruction_body=body,
                    canonical_hash=canonical_hash(
                        name=content.name,
                        description=content.description,
                        frontmatter=frontmatter,
                        instruction_body=body,
                        components=rows,
                    ),
                    approx_tokens=revision_tokens(
                        name=content.name,
                        description=content.description,
                        frontmatter=frontmatter,
                        instruction_body=body,
                        resources=sorted(manifest),
                    ),
                    author=owner,
                    message="bench",
                    source="api",
                    state_changed_at=now,
                )
            )
        published = own[published_number - 1]
        # The pointers and search columns services.skills._refresh_pointers would write.
        skills.append(
            Skill(
                pk=skill_pk,
                workspace=team,
                slug=content.slug,
                revision_count=revisions,
                latest_revision_id=own[-1].pk,
                published_revision_id=published.pk,
                current_revision_id=published.pk,
                model_invocable=True,
                **search_columns(
                    name=published.name,
                    slug=content.slug,
                    description=published.description,
                    body=published.instruction_body,
                ),
            )
        )
        rev_rows += own
    _insert(Skill, skills)
    _insert(SkillRevision, rev_rows)
    # Content-addressed: bytes another workspace's skill already stored are not stored again.
    blob_ids = dict(Blob.objects.filter(sha256__in=list(blob_data)).values_list("sha256", "id"))
    missing = [sha for sha in blob_data if sha not in blob_ids]
    blob_ids.update(zip(missing, _next_ids(Blob, len(missing)), strict=True))
    _insert(
        Blob,
        [
            Blob(pk=blob_ids[sha], sha256=sha, size=len(blob_data[sha]), data=blob_data[sha])
            for sha in missing
        ],
    )
    _insert(
        SkillComponent,
        [
            SkillComponent(
                revision_id=revision_pk,
                logical_path=path,
                type=ctype,
                blob_id=blob_ids[sha],
                content_hash=sha,
                size=size,
                media_type=media_type,
            )
            for revision_pk, path, ctype, sha, size, media_type in comp_specs
        ],
    )


def _next_ids(model: Any, count: int) -> list[int]:
    """``count`` primary keys for new rows of ``model``, taken before the rows are inserted."""
    from django.db import connection

    table = model._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
                [table, count],
            )
            return [row[0] for row in cursor.fetchall()]
        cursor.execute(f"SELECT coalesce(max(id), 0) FROM {table}")
        (last,) = cursor.fetchone()
        return list(range(last + 1, last + 1 + count))


def _insert(model: Any, objs: list[Any]) -> None:
    """Insert ``objs`` as ``bulk_create`` would (the fields' defaults and database values), on
    PostgreSQL through ``COPY``: several times quicker than a multi-row ``INSERT``, whose
    parameters psycopg must turn into SQL text one by one. Row triggers fire either way."""
    from django.db import connection

    if not objs:
        return
    if connection.vendor != "postgresql":
        model.objects.bulk_create(objs, batch_size=500)
        return
    fields = [f for f in model._meta.concrete_fields if not (f.primary_key and objs[0].pk is None)]
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    sql = f"COPY {model._meta.db_table} ({columns}) FROM STDIN"
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        for obj in objs:
            copy.write_row(
                [f.get_db_prep_save(f.pre_save(obj, add=True), connection) for f in fields]
            )


def labelled(slug: str) -> bool:
    """Whether the bench skill ``slug`` is one of the labelled half (``seed_labels``)."""
    return int(slug.rsplit("-", 1)[1]) % 2 == 1


def seed_labels() -> int:
    """``LABELS`` on the published revision of every labelled bench skill, where missing, as
    ``services.labels.label_move`` would leave them; answers how many were added."""
    from skills_app.models import Skill, SkillLabel, Workspace

    team = Workspace.objects.get(slug=TEAM_SLUG)
    owner = team.created_by
    skills = Skill.objects.filter(workspace=team, published_revision__isnull=False).values_list(
        "pk", "slug", "published_revision_id"
    )
    have = set(SkillLabel.objects.filter(workspace=team).values_list("skill_id", "name"))
    rows = [
        SkillLabel(skill_id=pk, workspace=team, name=name, revision_id=revision, moved_by=owner)
        for pk, slug, revision in skills
        if labelled(slug)
        for name in LABELS
        if (pk, name) not in have
    ]
    _insert(SkillLabel, rows)
    return len(rows)


def oauth_access_token(origin: str) -> str:
    """A fresh OAuth access token of the bench user, consented (read + write, all workspaces)
    through the product's consent service and bound to ``origin``'s MCP resource, as the
    authorization endpoint would issue it."""
    import secrets
    from datetime import timedelta

    from django.contrib.auth import get_user_model
    from django.utils import timezone
    from oauth2_provider.models import AccessToken, Application, set_token_value

    from skills_app.access import Actor
    from skills_app.oauth.resource import mcp_resource
    from skills_app.services.oauth import connection_grant

    user = get_user_model().objects.get(username=USERNAME)
    application = Application.objects.create(
        name="bench agent",
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
    )
    connection_grant(
        actor=Actor(user=user, via="console"),
        application=application,
        redirect_uri="http://127.0.0.1/callback",
        scopes=["skills:read", "skills:write"],
        workspace=None,
        profile="ordinary-full",
    )
    secret = secrets.token_urlsafe(30)
    access = AccessToken(
        user=user,
        application=application,
        expires=timezone.now() + timedelta(hours=1),
        scope="skills:read skills:write",
        resource=[mcp_resource(origin)],
    )
    set_token_value(access, secret)
    access.save()
    return secret


def seed_vectors(*, progress: Any = print) -> int:
    """Give every bench skill's current revision a stored embedding, as the workers would.

    Computing 100,000 real embeddings takes tens of minutes on two cores, and the latency of
    Level 0 does not depend on what the stored vectors say, so the bench stores deterministic
    synthetic ones: unit vectors around one centre per topic word of the skill (so they cluster
    like real ones). The query's embedding is real: the model runs for every search.
    """
    import numpy as np
    from django.db import connection

    from skills_app.encoder import embedding
    from skills_app.models import RevisionEmbedding, Skill, Workspace

    team = Workspace.objects.get(slug=TEAM_SLUG)
    missing = list(
        Skill.objects.filter(workspace=team, current_revision__isnull=False)
        .exclude(current_revision__embeddings__model=embedding.MODEL)
        .values_list("current_revision_id", "slug")
    )
    rng = np.random.default_rng(11)
    centres = rng.standard_normal((len(TOPIC_WORDS), embedding.DIM)).astype(np.float32)
    added = 0
    for start in range(0, len(missing), 5000):
        batch = missing[start : start + 5000]
        rows = []
        for revision_pk, slug in batch:
            index = int(slug.rsplit("-", 1)[1])
            topic = random.Random(index).sample(range(len(TOPIC_WORDS)), 3)
            noise = np.random.default_rng(index).standard_normal(embedding.DIM).astype(np.float32)
            vector = centres[topic].sum(axis=0) + 1.5 * noise
            vector /= np.linalg.norm(vector)
            rows.append(
                RevisionEmbedding(
                    revision_id=revision_pk,
                    model=embedding.MODEL,
                    model_version="bench-synthetic",
                    dim=embedding.DIM,
                    vector=embedding.vector_bytes(vector),
                )
            )
        _insert(RevisionEmbedding, rows)
        added += len(rows)
        progress(f"  stored {start + len(batch):,} / {len(missing):,} vectors")
    if added and connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {RevisionEmbedding._meta.db_table}")
    return added

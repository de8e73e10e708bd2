"""The demo content of the embedded default: realistic skills in several states."""

from __future__ import annotations

import json
from dataclasses import dataclass

from skills_app.domain.bundle import ComponentData, SkillBundle

DEMO_USER = "demo"
DEMO_PASSWORD = "demo"
REVIEWER_USER = "riley"
TEAM_SLUG = "acme-ops"

# A 1x1 PNG: a real binary artifact for the demo.
PIXEL_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2"
    "21bc330000000049454e44ae426082"
)


@dataclass(frozen=True)
class DemoSave:
    workspace: str  # "personal" or "team"
    slug: str
    bundle: SkillBundle
    intent: str
    as_user: str = DEMO_USER
    message: str = ""
    approved_by: str | None = None  # a team proposal this reviewer approves


def _md(path: str, ctype: str, text: str) -> ComponentData:
    return ComponentData(
        logical_path=path, type=ctype, content=text.encode(), media_type="text/markdown"
    )


INCIDENT = SkillBundle(
    name="Incident response checklist",
    description="Triage a production incident: declare severity, assign roles, communicate, and "
    "hand over to a postmortem. Use when an alert pages or a customer reports an outage.",
    instruction_body="""# Incident response

1. **Declare** the incident in `#incidents` and pick a severity from the matrix in
   `references/severity-matrix.md`.
2. **Assign roles**: incident commander, communications lead, scribe.
3. **Stabilise first**, diagnose second. Prefer rollback over forward fixes.
4. Post a status update every 30 minutes using `templates/status-update.md`.
5. When resolved, open a postmortem from `templates/postmortem.md` within 48 hours.

Arguments given: $ARGUMENTS
""",
    frontmatter={
        "license": "Apache-2.0",
        "allowed-tools": ["Read", "Bash(kubectl get *)"],
        "metadata": {"owner": "sre"},
    },
    components=(
        _md(
            "references/severity-matrix.md",
            "reference",
            "| Sev | Impact |\n|---|---|\n| 1 | Full outage |\n| 2 | Degraded |\n| 3 | Minor |\n",
        ),
        _md(
            "templates/status-update.md",
            "template",
            "**Status:** {investigating|identified|monitoring|resolved}\n"
            "**Impact:** …\n**Next update:** …\n",
        ),
        _md(
            "templates/postmortem.md",
            "template",
            "# Postmortem: {title}\n\n## Timeline\n\n## Root cause\n\n## Action items\n",
        ),
    ),
)

COMMIT_STYLE = SkillBundle(
    name="Git commit style",
    description="Write commit messages in the house style: imperative subject under 72 characters, "
    "a blank line, then why the change was made.",
    instruction_body='Write the subject in the imperative mood ("Add", not "Added").\n\n'
    "Explain *why* in the body; the diff already says *what*.\n",
    frontmatter={"argument-names": ["scope"], "invoke": {"user": True, "model": True}},
    components=(),
)

DEPLOY_V1 = SkillBundle(
    name="Production deploy runbook",
    description="Ship a release to production safely: pre-flight checks, canary, full rollout "
    "and rollback.",
    instruction_body="""# Deploy

1. Check the release notes and the CI status of the tag.
2. Deploy to the canary pool; watch error rate for 10 minutes.
3. Roll out to all pools.
4. If the error rate rises above 1 %, run `scripts/rollback.sh`.
""",
    frontmatter={"when_to_use": "Before any production release", "metadata": {"os": ["linux"]}},
    components=(
        ComponentData(
            "scripts/rollback.sh",
            "script",
            b"#!/bin/sh\necho '{\"rolled_back\": true}'\n",
            "text/x-shellscript",
        ),
        _md("references/pools.md", "reference", "- canary: 5 %\n- main: 95 %\n"),
    ),
)

DEPLOY_V2 = SkillBundle(
    name=DEPLOY_V1.name,
    description=DEPLOY_V1.description,
    instruction_body=DEPLOY_V1.instruction_body.replace(
        "watch error rate for 10 minutes", "watch error rate and p99 latency for 15 minutes"
    )
    + "5. Announce the release in `#releases` with the changelog link.\n",
    frontmatter=DEPLOY_V1.frontmatter,
    components=None,
)

ONBOARDING = SkillBundle(
    name="New engineer onboarding",
    description="Walk a new engineer through accounts, repositories and the first-week checklist.",
    instruction_body="Welcome! Work through `templates/first-week.md` with your buddy.\n",
    frontmatter={},
    components=(
        _md(
            "templates/first-week.md",
            "template",
            "- [ ] Laptop set up\n- [ ] Repos cloned\n- [ ] First PR merged\n",
        ),
        ComponentData("assets/badge.png", "artifact", PIXEL_PNG, "image/png"),
    ),
)


def _triggers(should: list[str], should_not: list[str]) -> ComponentData:
    content = json.dumps({"should_trigger": should, "should_not_trigger": should_not}, indent=2)
    return ComponentData("evals/triggers.json", "document", content.encode(), "application/json")


# Two skills with trigger checks (docs/evals.md): the proposed db-migrate also claims
# db-restore's tasks, so its review page shows the collision.
DB_RESTORE = SkillBundle(
    name="Restore a database from backup",
    description="Restore a PostgreSQL database from last night's backup or a dump after data "
    "loss or corruption. Use when rows were deleted or a database must be rebuilt.",
    instruction_body="# Restore\n\n1. Find the newest dump in the backup bucket.\n"
    "2. Restore it into a fresh database with `pg_restore`.\n3. Check row counts, then switch.\n",
    frontmatter={},
    components=(
        _triggers(
            [
                "restore the postgres database from last night's backup",
                "bring back rows someone deleted by mistake",
                "rebuild the database after disk corruption",
            ],
            ["write the release notes", "onboard a new engineer"],
        ),
    ),
)

DB_MIGRATE = SkillBundle(
    name="Database migrations and restores",
    description="Run PostgreSQL schema migrations before a release, and restore the database "
    "from a backup dump when a migration went wrong or rows were deleted.",
    instruction_body="# Migrate\n\n1. Take a dump.\n2. Run the pending migrations.\n"
    "3. If anything fails, restore the dump.\n",
    frontmatter={},
    components=(
        _triggers(
            ["run the pending schema migrations", "migrate the database before the release"],
            ["restore the postgres database from last night's backup"],
        ),
    ),
)

DEMO_SAVES: tuple[DemoSave, ...] = (
    DemoSave(
        "personal", "incident-response-checklist", INCIDENT, "publish", message="First version"
    ),
    DemoSave("personal", "git-commit-style", COMMIT_STYLE, "draft"),
    DemoSave(
        "team",
        "deploy-runbook",
        DEPLOY_V1,
        "publish",
        message="Initial runbook",
        approved_by=REVIEWER_USER,
    ),
    DemoSave(
        "team",
        "db-restore",
        DB_RESTORE,
        "publish",
        message="Restore runbook with trigger checks",
        approved_by=REVIEWER_USER,
    ),
    DemoSave("team", "db-migrate", DB_MIGRATE, "publish", message="Migrations, restores too"),
    DemoSave("team", "onboarding-sop", ONBOARDING, "draft", as_user=REVIEWER_USER),
    DemoSave(
        "team",
        "deploy-runbook",
        DEPLOY_V2,
        "publish",
        as_user=REVIEWER_USER,
        message="Longer canary",
    ),
)

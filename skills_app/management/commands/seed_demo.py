from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.utils import timezone

from skills_app.access import Actor
from skills_app.domain import lifecycle
from skills_app.domain.tokens import token_hash
from skills_app.management import demo_data
from skills_app.models import ApiToken, Membership, Skill, SkillRevision, Workspace
from skills_app.services.accounts import token_create, user_create
from skills_app.services.skills import revision_transition, skill_save


class Command(BaseCommand):
    help = "Seed the demo user, a team workspace and sample skills (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--print-credentials",
            action="store_true",
            help="Also print the demo login and a demo API token (a new one, unless --token-file "
            "holds one that still works).",
        )
        parser.add_argument(
            "--token-file",
            type=Path,
            help="Where the demo token is kept (mode 0600) and reused from, so a restart does "
            "not mint another one.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        with transaction.atomic():
            self._seed()
        if options["print_credentials"]:
            user = get_user_model().objects.get(username=demo_data.DEMO_USER)
            secret = _demo_token(user, options["token_file"])
            self.stdout.write(
                f"Demo login: {demo_data.DEMO_USER} / {demo_data.DEMO_PASSWORD}\n"
                f"Demo token: {secret}\n"
            )

    def _seed(self) -> None:
        # The demo password is meant to be guessable: the embedded default only.
        demo = user_create(
            username=demo_data.DEMO_USER,
            email="demo@example.com",
            password=demo_data.DEMO_PASSWORD,
            check_password_strength=False,
        )
        riley = user_create(
            username=demo_data.REVIEWER_USER,
            email="riley@example.com",
            password=demo_data.DEMO_PASSWORD,
            check_password_strength=False,
        )
        team, _ = Workspace.objects.get_or_create(
            slug=demo_data.TEAM_SLUG,
            defaults={"name": "Acme Ops", "kind": Workspace.Kind.TEAM, "created_by": demo},
        )
        Membership.objects.get_or_create(workspace=team, user=demo, defaults={"role": "owner"})
        # Riley reviews: the team, like every new one, requires a reviewer other than the author.
        Membership.objects.get_or_create(workspace=team, user=riley, defaults={"role": "admin"})
        users = {demo_data.DEMO_USER: demo, demo_data.REVIEWER_USER: riley}
        personal = Workspace.objects.get(slug=demo.get_username())
        if Skill.objects.filter(workspace__in=[personal, team]).exists():
            return  # already seeded: never add revisions on a second run
        for item in demo_data.DEMO_SAVES:
            actor = Actor(user=users[item.as_user], via="cli")
            result = skill_save(
                actor=actor,
                workspace=personal if item.workspace == "personal" else team,
                slug=item.slug,
                bundle=item.bundle,
                intent=item.intent,
                message=item.message,
            )
            # Riley approves what the demo shows as served (the first deploy runbook, so the
            # later proposal has a diff base; db-restore, whose tasks db-migrate's proposal wins).
            if item.approved_by and result.revision.state == SkillRevision.State.PROPOSED:
                revision_transition(
                    actor=Actor(user=users[item.approved_by], via="cli"),
                    revision=result.revision,
                    action="approve",
                )


def _demo_token(user: Any, path: Path | None) -> str:
    """The demo token kept in ``path`` while it still works (not revoked, not expired), else a
    new one, written there (0600)."""
    if path is not None and path.exists():
        secret = path.read_text(encoding="utf-8").strip()
        usable = ApiToken.objects.filter(
            user=user, secret_hash=token_hash(secret), revoked_at__isnull=True
        ).exclude(expires_at__lte=timezone.now())
        if usable.exists():
            return secret
    _, secret = token_create(
        actor=Actor(user=user, via="cli"),
        user=user,
        name="demo",
        scopes=list(lifecycle.SCOPES),
    )
    if path is not None:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(secret + "\n")
        path.chmod(0o600)  # a file that was there before keeps its old mode otherwise
    return secret

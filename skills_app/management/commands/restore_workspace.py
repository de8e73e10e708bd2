from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from skills_app import errors
from skills_app.access import Actor
from skills_app.formats.backup import backup_read
from skills_app.models import Workspace
from skills_app.services.backup import workspace_restore


class Command(BaseCommand):
    help = (
        "Restore a workspace backup (a workspace export ZIP) into an EMPTY team workspace, in "
        "one transaction: all of it, or nothing and the reason. Authors and reviewers map to "
        "existing users by username."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        parser.add_argument("--workspace", required=True, help="the empty team's slug")
        parser.add_argument(
            "--as-user",
            default=None,
            help="act as this user (an owner or admin of the team) instead of the system",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = Workspace.objects.filter(slug=options["workspace"]).first()
        if workspace is None:
            raise CommandError(f"No workspace named '{options['workspace']}'.")
        actor = Actor.for_system(via="cli")
        if options["as_user"]:
            user = get_user_model().objects.filter(username=options["as_user"]).first()
            if user is None:
                raise CommandError(f"No user named '{options['as_user']}'.")
            actor = Actor(user=user, via="cli")
        try:
            data = Path(options["file"]).read_bytes()
        except OSError as exc:
            raise CommandError(f"Cannot read {options['file']}: {exc.strerror}.") from exc
        try:
            result = workspace_restore(actor=actor, workspace=workspace, backup=backup_read(data))
        except errors.XmemoError as exc:
            raise CommandError(f"Nothing was restored: {exc.message}") from exc
        self.stdout.write(
            f"Restored {len(result['skills'])} skill(s) with {result['revision_count']} "
            f"revision(s) from '{result['from_workspace']}' into '{workspace.slug}'."
        )

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from skills_app import errors
from skills_app.access import Actor
from skills_app.mcp_profiles import DEFAULT_PROFILE
from skills_app.models import Workspace
from skills_app.services.accounts import token_create


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print the bearer token alone on one line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--scopes", default="skills:read,skills:write")
        parser.add_argument("--workspace", default=None)
        parser.add_argument("--profile", default=DEFAULT_PROFILE)
        parser.add_argument("--name", default="cli")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user named '{options['username']}'.")
        workspace = None
        if options["workspace"]:
            workspace = Workspace.objects.filter(slug=options["workspace"]).first()
            if workspace is None:
                raise CommandError(f"No workspace named '{options['workspace']}'.")
        scopes = [s.strip() for s in options["scopes"].split(",") if s.strip()]
        try:
            _, secret = token_create(
                actor=Actor(user=user, via="cli"),
                user=user,
                name=options["name"],
                scopes=scopes,
                workspace=workspace,
                profile=options["profile"],
            )
        except errors.XmemoError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(secret)

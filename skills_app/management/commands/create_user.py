from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from skills_app import errors
from skills_app.services.accounts import user_create


class Command(BaseCommand):
    help = "Create a user and their personal workspace (slug = USERNAME). Idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument("--password", default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            user_create(
                username=options["username"], email=options["email"], password=options["password"]
            )
        except errors.XmemoError as exc:
            raise CommandError(exc.message) from exc

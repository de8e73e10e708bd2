"""Django's ``createsuperuser``, with the personal workspace every user gets (docs/contract.md §2).

It shadows ``django.contrib.auth``'s command of the same name because ``skills_app`` comes before
``django.contrib.auth`` in ``INSTALLED_APPS`` (Django takes a command from the first app that
has it); tests/services/test_personal_workspace.py fails if that order changes.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.management.commands import createsuperuser

from skills_app.services.accounts import personal_workspaces_ensure_since, user_last_pk


class Command(createsuperuser.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        # No transaction around Django's command: it may prompt for minutes, and on SQLite an
        # open write transaction would hold every other writer back meanwhile.
        mark = user_last_pk()
        super().handle(*args, **options)
        personal_workspaces_ensure_since(after_pk=mark)

"""Delete the OAuth clients registered but never used (docs/contract.md §16b).

Registration is open, so abandoned registrations would pile up; run this from cron (hourly is
plenty): a client with no consent, grant or token older than XMEMO_OAUTH_UNUSED_CLIENT_HOURS
goes."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from skills_app.services.oauth import oauth_clients_expire


class Command(BaseCommand):
    help = "Delete OAuth clients never used and older than XMEMO_OAUTH_UNUSED_CLIENT_HOURS."

    def handle(self, *args: Any, **options: Any) -> None:
        deleted = oauth_clients_expire()
        self.stdout.write(f"{deleted} unused OAuth client(s) deleted.")

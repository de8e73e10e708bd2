from __future__ import annotations

from typing import Any

from cryptography.fernet import InvalidToken
from django.core.management.base import BaseCommand, CommandError

from skills_app.services.workspace_settings import workspace_secrets_rotate


class Command(BaseCommand):
    help = (
        "Re-encrypt every workspace secret and webhook signing secret with the first "
        "XMEMO_SECRETS_KEY key; run it after prepending a new key, then remove the old one. "
        "Prints the count."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            count = workspace_secrets_rotate()
        except InvalidToken as exc:
            raise CommandError(
                "A stored secret opens with none of the XMEMO_SECRETS_KEY keys (nor the key "
                "derived from SECRET_KEY); put the old key back in the list and run it again."
            ) from exc
        self.stdout.write(f"{count} secrets re-encrypted.")

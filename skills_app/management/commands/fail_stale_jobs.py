"""Fail the jobs that already read as failed (worker gone, or never taken) in the database too.

The workers do this periodically; the command is for deployments whose workers are down, or a
cron job that keeps the table tidy."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from skills_app.services.jobs.run import jobs_fail_stale


class Command(BaseCommand):
    help = "Mark the jobs whose worker vanished, or that no worker took, as failed."

    def handle(self, *args: Any, **options: Any) -> None:
        failed = jobs_fail_stale()
        self.stdout.write(f"{failed} stale job(s) marked failed.")

"""A revision's scan is part of every Level 1 answer and MCP entry (docs/contract.md §21), and it
changes (the scan finishes, an owner overrides): so its table gets the statement trigger that
``NOTIFY xmemo_recall`` on every change (migration 0003, ``infra.invalidation``), and the next
answer, and its ETag, change in every process."""

from django.db import migrations

from skills_app.migrations._postgresql import run_on_postgresql

TABLE = "skills_app_revisionscan"


class Migration(migrations.Migration):
    dependencies = [
        ("skills_app", "0029_permission_modes"),
    ]

    operations = [
        run_on_postgresql(
            [
                "CREATE TRIGGER xmemo_recall_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE"
                f" ON {TABLE} FOR EACH STATEMENT EXECUTE FUNCTION xmemo_notify_recall()"
            ],
            [f"DROP TRIGGER IF EXISTS xmemo_recall_notify ON {TABLE}"],
        ),
    ]

"""New teams require a reviewer other than the author (docs/contract.md §16).

Only the default changes: workspaces that exist keep the value their admins see on the settings
page. Flipping them would stop a team of one from publishing anything, unannounced; their admins
switch it on themselves (audited).

The default is Django's, not the database's, so nothing changes in the schema: on SQLite a plain
AlterField would rebuild the workspace table (and trip the triggers of the tables that point at
it) for no effect.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("skills_app", "0018_restore_imported_names"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="workspace",
                    name="require_distinct_reviewer",
                    field=models.BooleanField(default=True),
                ),
            ],
            database_operations=[],
        ),
    ]

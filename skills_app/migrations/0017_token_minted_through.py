"""A token minted through an OAuth connection records that connection's consent token, so
revoking the connection revokes it (docs/contract.md §16b)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("skills_app", "0016_job_token"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="minted_through",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="minted",
                to="skills_app.apitoken",
            ),
        ),
    ]

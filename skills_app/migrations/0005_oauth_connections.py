"""OAuth connections (skills_app/models/oauth.py), and recall-cache invalidation on OAuth
access tokens: revoking a token family or a token deletes its access tokens, and every process's
verified-token cache must forget them at commit, as it does for API tokens (migration 0003)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

TABLE = "oauth2_provider_accesstoken"


def forwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"CREATE TRIGGER xmemo_recall_notify AFTER UPDATE OR DELETE OR TRUNCATE"
            f" ON {TABLE} FOR EACH STATEMENT EXECUTE FUNCTION xmemo_notify_recall()"
        )


def backwards(apps, schema_editor):  # type: ignore[no-untyped-def]
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(f"DROP TRIGGER IF EXISTS xmemo_recall_notify ON {TABLE}")


class Migration(migrations.Migration):
    dependencies = [
        ("skills_app", "0004_workspace_secrets"),
        ("oauth2_provider", "0022_refreshtoken_token_family_index"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="OAuthConnection",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "api_token",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="oauth_connection",
                        to="skills_app.apitoken",
                    ),
                ),
                (
                    "application",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="xmemo_connections",
                        to="oauth2_provider.application",
                    ),
                ),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="oauth_connections",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("application", "user"), name="uniq_oauth_connection")
                ],
            },
        ),
        migrations.RunPython(forwards, backwards),
    ]

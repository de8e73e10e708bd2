"""Labels (docs/contract.md §18): named pointers from a skill to one of its revisions; and
``Skill.user_invocable``, the denormalized "is a command" flag MCP prompts/list reads (filled
here from each skill's current revision, as ``services.skills._refresh_pointers`` keeps it).

The table is one of those recall resolves through (Level 1 ``label=`` and the ``labels`` every
Level 1 answer lists), so on PostgreSQL it gets the statement trigger that ``NOTIFY
xmemo_recall`` on every change (migration 0003, ``infra.invalidation``): a moved label changes
the next answer in every process. A second trigger refuses a label whose revision belongs to
another skill, which no foreign key can say.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

from skills_app.migrations._postgresql import run_on_postgresql

TABLE = "skills_app_skilllabel"

POSTGRES_UP = [
    f"CREATE TRIGGER xmemo_recall_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE"
    f" ON {TABLE} FOR EACH STATEMENT EXECUTE FUNCTION xmemo_notify_recall()",
    """
    CREATE OR REPLACE FUNCTION xmemo_label_same_skill() RETURNS trigger AS $$
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM skills_app_skillrevision r
                     WHERE r.id = NEW.revision_id AND r.skill_id = NEW.skill_id) THEN
        RAISE EXCEPTION 'a label points at a revision of its own skill'
          USING ERRCODE = 'integrity_constraint_violation';
      END IF;
      RETURN NEW;
    END;
    $$ LANGUAGE plpgsql
    """,
    f"CREATE TRIGGER xmemo_label_same_skill BEFORE INSERT OR UPDATE ON {TABLE}"
    " FOR EACH ROW EXECUTE FUNCTION xmemo_label_same_skill()",
]
POSTGRES_DOWN = [
    f"DROP TRIGGER IF EXISTS xmemo_label_same_skill ON {TABLE}",
    "DROP FUNCTION IF EXISTS xmemo_label_same_skill()",
    f"DROP TRIGGER IF EXISTS xmemo_recall_notify ON {TABLE}",
]


def _user_invocable_fill(apps, schema_editor):  # type: ignore[no-untyped-def]
    skill_model = apps.get_model("skills_app", "Skill")
    commands = []
    for skill in skill_model.objects.exclude(current_revision=None).select_related(
        "current_revision"
    ):
        invoke = (skill.current_revision.frontmatter or {}).get("invoke")
        if isinstance(invoke, dict) and invoke.get("user") is True:
            commands.append(skill.pk)
    skill_model.objects.filter(pk__in=commands).update(user_invocable=True)


class Migration(migrations.Migration):
    dependencies = [
        ("skills_app", "0019_require_distinct_reviewer_by_default"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="skill",
            name="user_invocable",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(_user_invocable_fill, migrations.RunPython.noop),
        migrations.CreateModel(
            name="SkillLabel",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.CharField(max_length=32)),
                ("moved_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "moved_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "revision",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="labels",
                        to="skills_app.skillrevision",
                    ),
                ),
                (
                    "skill",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="labels",
                        to="skills_app.skill",
                    ),
                ),
                (
                    "workspace",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="skills_app.workspace",
                    ),
                ),
            ],
            options={
                "ordering": ["name"],
                "indexes": [models.Index(fields=["revision"], name="label_revision_idx")],
                "constraints": [
                    models.UniqueConstraint(fields=("skill", "name"), name="uniq_label_per_skill"),
                    models.CheckConstraint(
                        condition=models.Q(name__regex="^[a-z][a-z0-9-]{0,31}$")
                        & ~models.Q(name__in=["published", "latest"]),
                        name="label_name_valid",
                    ),
                ],
            },
        ),
        run_on_postgresql(POSTGRES_UP, POSTGRES_DOWN),
    ]

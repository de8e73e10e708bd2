# Review conversations, notification preferences and workspace tokens (h13).

import django.db.models.deletion
import django.utils.timezone
import skills_app.models.reviews
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('skills_app', '0010_webhook_secrets_delivery_outbox'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='NotificationPreference',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('review_requests', models.BooleanField(default=True)),
                ('review_outcomes', models.BooleanField(default=True)),
                ('comments', models.BooleanField(default=True)),
            ],
        ),
        migrations.CreateModel(
            name='RevisionApproval',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                'ordering': ['created_at', 'pk'],
            },
        ),
        migrations.CreateModel(
            name='RevisionComment',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('comment_id', models.CharField(default=skills_app.models.reviews.comment_id, max_length=40, unique=True)),
                ('body', models.TextField()),
                ('line', models.PositiveIntegerField(blank=True, null=True)),
                ('action', models.CharField(blank=True, default='', max_length=32)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ],
            options={
                'ordering': ['created_at', 'pk'],
            },
        ),
        migrations.AddField(
            model_name='apitoken',
            name='role',
            field=models.CharField(blank=True, default='', max_length=16),
        ),
        migrations.AddField(
            model_name='skillrevision',
            name='answers_revision',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='skills_app.skillrevision'),
        ),
        migrations.AddField(
            model_name='workspace',
            name='required_approvals',
            field=models.PositiveSmallIntegerField(default=1),
        ),
        migrations.AddConstraint(
            model_name='apitoken',
            constraint=models.CheckConstraint(condition=models.Q(('role', ''), models.Q(('role__in', ['member', 'admin']), ('workspace__isnull', False)), _connector='OR'), name='workspace_token_has_role_and_workspace'),
        ),
        migrations.AddField(
            model_name='notificationpreference',
            name='user',
            field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='notification_preference', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='revisionapproval',
            name='revision',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='approvals', to='skills_app.skillrevision'),
        ),
        migrations.AddField(
            model_name='revisionapproval',
            name='user',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='revisioncomment',
            name='author',
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='revisioncomment',
            name='revision',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='comments', to='skills_app.skillrevision'),
        ),
        migrations.AddField(
            model_name='revisioncomment',
            name='workspace',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='skills_app.workspace'),
        ),
        migrations.AddIndex(
            model_name='revisioncomment',
            index=models.Index(fields=['revision', 'created_at'], name='comment_rev_time_idx'),
        ),
    ]

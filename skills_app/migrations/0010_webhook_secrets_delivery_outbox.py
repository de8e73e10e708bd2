# Webhook signing secrets encrypted at rest; webhook deliveries through the outbox.

from django.db import migrations, models

from skills_app.infra.crypto import secret_encrypt, secret_open

# Secrets were generated as "whsec_" + base64; a Fernet token never starts so.
PLAIN_PREFIX = "whsec_"


def encrypt_plaintext(apps, schema_editor):
    Webhook = apps.get_model("skills_app", "Webhook")
    for webhook in Webhook.objects.filter(secret_ciphertext__startswith=PLAIN_PREFIX):
        webhook.secret_ciphertext = secret_encrypt(webhook.secret_ciphertext)
        webhook.save(update_fields=["secret_ciphertext"])


def decrypt_to_plaintext(apps, schema_editor):
    Webhook = apps.get_model("skills_app", "Webhook")
    for webhook in Webhook.objects.exclude(secret_ciphertext__startswith=PLAIN_PREFIX):
        webhook.secret_ciphertext = secret_open(webhook.secret_ciphertext)
        webhook.save(update_fields=["secret_ciphertext"])


class Migration(migrations.Migration):

    dependencies = [
        ('skills_app', '0009_invitations_webhooks'),
    ]

    operations = [
        migrations.RenameField(
            model_name='webhook',
            old_name='secret',
            new_name='secret_ciphertext',
        ),
        migrations.AlterField(
            model_name='webhook',
            name='secret_ciphertext',
            field=models.TextField(),
        ),
        migrations.RunPython(encrypt_plaintext, decrypt_to_plaintext),
        migrations.AddField(
            model_name='webhookdelivery',
            name='enqueued_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name='webhookdelivery',
            index=models.Index(condition=models.Q(('enqueued_at__isnull', True), ('state', 'pending')), fields=['created_at'], name='delivery_outbox_idx'),
        ),
        # Deliveries made before the outbox were handed to the broker at their commit: not again.
        migrations.RunSQL(
            "UPDATE skills_app_webhookdelivery SET enqueued_at = created_at "
            "WHERE enqueued_at IS NULL",
            migrations.RunSQL.noop,
        ),
    ]

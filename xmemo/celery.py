"""The Celery application. Tasks live in ``skills_app.tasks``; settings come from Django."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "xmemo.settings")

app = Celery("xmemo")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

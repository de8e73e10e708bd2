"""Plumbing on framework internals, kept apart from the use cases so that an upgrade of Django,
psycopg or Celery breaks one known place (``tests/infra/test_private_apis.py`` says which):
``cache`` (immutable recall content, in-process then shared), ``db`` (prepared statements),
``invalidation`` (LISTEN/NOTIFY generations for caches of mutable facts), ``queue`` (enqueueing a
job by task name, so the core never imports a front door)."""

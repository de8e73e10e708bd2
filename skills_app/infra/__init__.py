"""Plumbing on framework internals (Celery's task registry today), kept apart from the use
cases so that the core never imports a front door and an upgrade breaks one known place."""

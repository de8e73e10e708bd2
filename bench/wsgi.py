"""The product's WSGI entry (``xmemo.wsgi``) with the bench's settings: the same start-up."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

from xmemo.wsgi import application

__all__ = ["application"]

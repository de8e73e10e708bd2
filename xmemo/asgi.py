"""ASGI entry: the Django app, with the MCP streamable HTTP transport mounted at /mcp."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "xmemo.settings")
application = get_asgi_application()

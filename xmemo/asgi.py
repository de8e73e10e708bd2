"""ASGI entry: the Django app, with the MCP streamable HTTP transport mounted at /mcp.

Served by uvicorn (``make run``, and the ``mcp`` service in production); gunicorn serves the
same Django app over WSGI (``xmemo.wsgi``) without /mcp.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "xmemo.settings")
# Request threads come and go under ASGI: database connections come from a bounded pool
# (settings, "Database").
os.environ.setdefault("XMEMO_ASGI", "1")
django_application = get_asgi_application()

# Imported once Django is set up: the MCP server reaches the models.
from skills_app.mcp.http import McpMount  # noqa: E402

application = McpMount(django_application)

# Long-lived start-up objects out of the cyclic collector's scans (skills_app/infra/heap.py),
# Level 0's model runtime imported first.
from skills_app.encoder.embedding import import_runtime  # noqa: E402
from skills_app.infra.heap import freeze_startup_heap  # noqa: E402

freeze_startup_heap(preload=[import_runtime])

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "xmemo.settings")
application = get_wsgi_application()

# Long-lived start-up objects out of the cyclic collector's scans (skills_app/infra/heap.py),
# Level 0's model runtime imported first.
from skills_app.encoder.embedding import import_runtime  # noqa: E402
from skills_app.infra.heap import freeze_startup_heap  # noqa: E402

freeze_startup_heap(preload=[import_runtime])

"""The product's WSGI application without its start-up freeze (``infra/heap.py``): the bench's
fallback for the heap kept out of the collector's scans (``bench/fast_paths.py``)."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")

from django.core.wsgi import get_wsgi_application

application = get_wsgi_application()

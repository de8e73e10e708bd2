# gunicorn reads this file from the working directory by default (the repository root, /app in
# the image): Prometheus multi-process counting for its workers (skills_app/infra/multiproc.py).
from skills_app.infra.multiproc import prepare

prepare()

# Sync workers that hand usage counts on to Redis while they idle (xmemo/gunicorn_worker.py).
worker_class = "xmemo.gunicorn_worker.UsageSyncWorker"

# The application (Django, the project, the model runtime) loaded once in the parent before the
# workers fork: they share its memory, and each starts without 2 CPU-s of imports. New code
# needs a restart, not a HUP. Nothing it loads holds a connection, file or thread a worker
# would share (tests/infra/test_gunicorn_worker.py).
preload_app = True

# gunicorn 25.1+ would listen for `gunicornc` (worker counts, reload, shutdown) on one socket per
# user (~/.gunicorn/gunicorn.ctl), shared by every gunicorn that user runs: not used here.
control_socket_disable = True

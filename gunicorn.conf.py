# gunicorn reads this file from the working directory by default (the repository root, /app in
# the image): Prometheus multi-process counting for its workers (skills_app/infra/multiproc.py).
from skills_app.infra.multiproc import prepare

prepare()

# Sync workers that hand usage counts on to Redis while they idle (xmemo/gunicorn_worker.py).
worker_class = "xmemo.gunicorn_worker.UsageSyncWorker"

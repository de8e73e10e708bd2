# gunicorn reads this file from the working directory by default (the repository root, /app in
# the image): Prometheus multi-process counting for its workers (skills_app/infra/multiproc.py).
from skills_app.infra.multiproc import prepare

prepare()

# gunicorn reads this file from the working directory by default (the repository root, /app in
# the image): Prometheus multi-process counting for its workers (xmemo/multiproc.py).
from xmemo.multiproc import prepare

prepare()

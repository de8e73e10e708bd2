import os

# One request, one core: the numpy/OpenBLAS and OpenMP thread pools (the Level 0 query
# embedding, faiss) would otherwise start a thread per core in every web and worker process,
# each spinning for work beside the others. Set before numpy is first imported; an operator's
# own values win.
for _pool in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_pool, "1")

from xmemo.celery import app as celery_app  # noqa: E402 - after the thread-pool sizes

__all__ = ("celery_app",)

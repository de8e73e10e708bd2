"""Prometheus multi-process mode, set up by the server's parent before any worker starts.

``prometheus_client`` decides at import whether it counts in files (multi-process) or in
memory, by ``PROMETHEUS_MULTIPROC_DIR``; so this module imports nothing of it, nor of Django.
The gunicorn configuration (``gunicorn.conf.py``) and the MCP service (``xmemo/serve.py``)
call ``prepare()`` in their parent process: the directory given (emptied of an earlier run's
files, whose counts would otherwise be added in) or a new one of this server's own, removed
when it exits.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

ENV = "PROMETHEUS_MULTIPROC_DIR"


def prepare() -> Path:
    given = os.environ.get(ENV)
    if given:
        path = Path(given)
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):
            stale.unlink()
    else:
        path = Path(tempfile.mkdtemp(prefix="xmemo-metrics-"))
        os.environ[ENV] = str(path)
        owner = os.getpid()

        def remove() -> None:  # in the server's own process, not in a forked worker
            if os.getpid() == owner:
                shutil.rmtree(path, ignore_errors=True)

        atexit.register(remove)
    return path

"""Background jobs: ``start`` creates and queues them, ``dispatch`` hands them to the broker,
``run`` (called by the worker) does the work. The doors start jobs through this package."""

from skills_app.services.jobs.start import (
    MAX_BACKUP_BYTES,
    MAX_UPLOAD_BYTES,
    execute_start,
    export_start,
    import_start,
    restore_start,
)

__all__ = [
    "MAX_BACKUP_BYTES",
    "MAX_UPLOAD_BYTES",
    "execute_start",
    "export_start",
    "import_start",
    "restore_start",
]

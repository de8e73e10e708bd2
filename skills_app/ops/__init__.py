"""The operators' door (docs/contract.md §19): ``/healthz``, ``/readyz`` and ``/metrics``
(``probes.py``, ``metrics_view.py``) and the JSON request log (``request_log.py``), as Django
middleware. What they read is plumbing below: ``infra/health.py``, ``infra/metrics.py``,
``infra/requestctx.py``, ``infra/multiproc.py``."""

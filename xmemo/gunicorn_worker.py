"""gunicorn's sync worker that also hands usage counts on while it idles (docs/contract.md §19).

Usage counts wait in a worker's memory up to ``usage.HANDOFF_SECONDS`` before they go to Redis
(``skills_app/infra/usage.py``). A sync worker runs nothing between requests, so this one wakes
at least that often and hands on what fell due at every turn of its loop (gunicorn's documented
``notify`` heartbeat): the last counts of a burst reach Redis without a next request.
``gunicorn.conf.py`` makes it the default worker class.
"""

from __future__ import annotations

from collections.abc import Callable

from gunicorn.workers.sync import SyncWorker


class UsageSyncWorker(SyncWorker):
    _handoff: Callable[[], None] = staticmethod(lambda: None)

    def run(self) -> None:
        # The application is loaded (Django set up): the usage module can be imported.
        from skills_app.infra import usage

        self._handoff = usage.handoff_if_due
        # The idle wait between turns of the loop: the heartbeat's, or the hand-off's if shorter.
        heartbeat = float(vars(self).get("timeout") or usage.HANDOFF_SECONDS)
        self.timeout = min(heartbeat, usage.HANDOFF_SECONDS)
        super().run()

    def notify(self) -> None:
        super().notify()
        self._handoff()

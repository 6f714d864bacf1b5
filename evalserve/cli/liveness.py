"""What a supervisor tells the store when a worker process dies: its heartbeat rows are removed at once, so
``GET /health`` counts it gone within a poll of the supervisor (0.2 s) instead of when its heartbeat grows stale
(``EVALSERVE_HEALTH_WORKER_STALE_SECONDS``, 30 s). A killed worker never removes its own row. The database is
written from a thread of its own: a slow or unreachable database never holds up the supervision."""

from __future__ import annotations

import logging
import queue
import socket
import threading

from evalserve.supervisor import Child

log = logging.getLogger(__name__)


class DeathNotices:
    """``Supervisor(on_exit=DeathNotices(database_url))``: removes a dead child's heartbeat rows (by host and pid;
    a process that wrote none, such as the API, removes nothing)."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.host = socket.gethostname()
        self._dead: queue.SimpleQueue[int] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="evalserve-death-notices", daemon=True)
        self._thread.start()

    def __call__(self, child: Child, pid: int, code: int) -> None:
        self._dead.put(pid)

    def _run(self) -> None:
        from evalserve.service.jobs import worker_status
        from evalserve.service.store.db import Database

        db = Database(self.database_url)
        while True:
            pid = self._dead.get()
            try:
                worker_status.forget_process(db, self.host, pid)
            except Exception as exc:  # the database is down: the row goes stale on its own
                log.warning("could not remove the heartbeat of dead worker process %d: %s", pid, exc)

"""Worker heartbeats: every worker process writes a row (``worker_heartbeats``) every few seconds from a
background thread, so ``GET /health`` can tell whether any worker is alive; a clean stop removes the row."""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import Any

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

from evalserve.service.jobs import worker_status
from evalserve.service.store.db import Database

log = logging.getLogger(__name__)

#: rows of workers silent this long are removed (a killed worker never removes its own)
FORGET_AFTER_SECONDS = 24 * 3600.0


class Heartbeat(threading.Thread):
    def __init__(self, app: Celery, name: str, queues: list[str]) -> None:
        super().__init__(name="evalserve-heartbeat", daemon=True)
        self.settings = app.conf.evalserve_settings
        self.db = Database(self.settings.database_url)
        self.worker, self.queues = name, queues
        self.halt = threading.Event()

    def beat(self) -> None:
        worker_status.record_heartbeat(self.db, self.worker, socket.gethostname(), os.getpid(), self.queues)

    def run(self) -> None:
        first = True
        while not self.halt.is_set():
            try:
                self.beat()
                if first:
                    worker_status.prune(self.db, FORGET_AFTER_SECONDS)
                    first = False
            except Exception as exc:  # the database is down: /health says so anyway; try again
                log.warning("heartbeat failed: %s", exc)
            self.halt.wait(self.settings.worker_heartbeat_seconds)

    def finish(self) -> None:
        self.halt.set()
        try:
            worker_status.forget(self.db, self.worker)
        except Exception as exc:
            log.warning("could not remove the heartbeat of %s: %s", self.worker, exc)


def install(app: Celery) -> None:
    """Start the heartbeat when the worker is ready (its node name and queues known); stop it at shutdown."""
    state: dict[str, Heartbeat] = {}

    @worker_ready.connect(weak=False)
    def _start(sender: Any = None, **_: Any) -> None:
        name = str(getattr(sender, "hostname", None) or f"celery@{socket.gethostname()}:{os.getpid()}")
        queues = sorted(app.amqp.queues.consume_from or {app.conf.task_default_queue: None})
        heartbeat = state["heartbeat"] = Heartbeat(app, name, queues)
        heartbeat.start()

    @worker_shutdown.connect(weak=False)
    def _stop(sender: Any = None, **_: Any) -> None:
        if "heartbeat" in state:
            state["heartbeat"].finish()

"""The sweeper: repairs what a crash or a broker restart lost. Each worker runs it in a background thread;
every few seconds it republishes jobs whose message may be gone (queued too long, or running under an expired
lease because their worker died), and webhook deliveries overdue for their next attempt. Duplicated messages are
harmless: claiming a job or a delivery attempt is atomic."""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import Celery
from celery.signals import worker_ready, worker_shutdown

from evalserve.service.broker.messages import EVALUATE_PART_TASK, publish
from evalserve.service.jobs import lifecycle as jobs
from evalserve.service.jobs import parts as job_parts
from evalserve.service.jobs.queue import JobQueue
from evalserve.service.store.db import Database
from evalserve.service.webhooks import delivery as webhooks

log = logging.getLogger(__name__)


def sweep_once(db: Database, queue: JobQueue, requeue_after_seconds: float) -> list[str]:
    """Republish every job that needs it; returns their ids."""
    ids = jobs.jobs_to_republish(db, requeue_after_seconds)
    for job_id in ids:
        queue.publish(job_id)
    if ids:
        log.info("sweeper republished %d job(s): %s", len(ids), ", ".join(ids[:5]))
    return ids


def sweep_parts(db: Database, app: Celery) -> list[tuple[str, int]]:
    """Keep split jobs alive while their parts wait, cancel those asked to stop, and republish every part that
    needs it (never published recently, or its worker died); returns (job id, part index) pairs."""
    settings = app.conf.evalserve_settings
    found = job_parts.sweep(db, settings.lease_seconds, settings.requeue_after_seconds)
    for job_id, index in found:
        publish(app, EVALUATE_PART_TASK, [job_id, index], queue=settings.queue, retry=False)
    if found:
        log.info("sweeper republished %d job part(s): %s", len(found), ", ".join(f"{j}.{i}" for j, i in found[:5]))
    return found


def delivery_grace_seconds(sweep_every_seconds: float) -> float:
    """How overdue a pending webhook delivery must be before the sweeper republishes it: its own message gets
    this long to arrive first (at least 5 s, and two sweeps)."""
    return max(5.0, 2 * sweep_every_seconds)


def sweep_deliveries(db: Database, app: Celery, overdue_seconds: float) -> list[str]:
    """Republish every webhook delivery overdue by more than ``overdue_seconds``; returns their ids."""
    ids = webhooks.due_deliveries(db, overdue_seconds=overdue_seconds)
    webhooks.publish_deliveries(app, ids)
    if ids:
        log.info("sweeper republished %d webhook delivery(ies): %s", len(ids), ", ".join(ids[:5]))
    return ids


class Sweeper(threading.Thread):
    def __init__(self, app: Celery) -> None:
        super().__init__(name="evalserve-sweeper", daemon=True)
        self.settings = app.conf.evalserve_settings
        self.db = Database(self.settings.database_url)
        self.app = app
        self.queue = JobQueue(app, self.db)
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            try:  # parts first: a split job whose parts still run must not look abandoned to sweep_once
                sweep_parts(self.db, self.app)
            except Exception as exc:
                log.warning("part sweep failed: %s", exc)
            try:
                sweep_once(self.db, self.queue, self.settings.requeue_after_seconds)
            except Exception as exc:  # the database or broker is down: try again later
                log.warning("sweep failed: %s", exc)
            try:
                sweep_deliveries(self.db, self.app, delivery_grace_seconds(self.settings.sweep_every_seconds))
            except Exception as exc:
                log.warning("webhook sweep failed: %s", exc)
            self.halt.wait(self.settings.sweep_every_seconds)


def install(app: Celery) -> None:
    """Start a sweeper in the worker's main process when the worker is ready; stop it at shutdown."""
    state: dict[str, Sweeper] = {}

    @worker_ready.connect(weak=False)
    def _start(sender: Any = None, **_: Any) -> None:
        sweeper = state["sweeper"] = Sweeper(app)
        sweeper.start()

    @worker_shutdown.connect(weak=False)
    def _stop(sender: Any = None, **_: Any) -> None:
        if "sweeper" in state:
            state["sweeper"].halt.set()

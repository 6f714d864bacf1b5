"""Publishing wake-up messages for jobs. A failed publish is not an error for the caller: the job is already
durable in the database, and the sweeper (``jobrun.recovery``) publishes it again."""

from __future__ import annotations

import logging

from celery import Celery
from sqlalchemy.orm import Session

from evalserve.service.broker.messages import EVALUATE_TASK, publish
from evalserve.service.jobs import lifecycle as jobs
from evalserve.service.store.db import Database
from evalserve.service.store.unit_of_work import after_commit

log = logging.getLogger(__name__)


class JobQueue:
    def __init__(self, celery: Celery, db: Database) -> None:
        self.celery, self.db = celery, db

    def publish_after_commit(self, s: Session, job_id: str) -> None:
        """Publish the job once the unit of work of ``s`` (which inserted it) is committed: the job row is durable
        before any worker hears of it, and a rolled-back job is never published."""
        after_commit(s, lambda: self.publish(job_id))

    def publish(self, job_id: str) -> bool:
        """Send the job's message; True when the broker took it."""
        try:
            queue = self.celery.conf.evalserve_settings.queue
            publish(self.celery, EVALUATE_TASK, [job_id], queue=queue)
        except Exception as exc:  # broker down: the sweeper will publish the job later
            log.warning("could not publish job %s (%s); it stays queued in the database", job_id, exc)
            return False
        jobs.mark_published(self.db, job_id)
        return True

"""What a worker process needs to run jobs -- settings, database, blob store -- built lazily per process (a
prefork child must not reuse connections opened by its parent before the fork)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from celery import Celery

from evalserve.service.core.config import Settings
from evalserve.service.jobrun.judgments import JudgmentsCache
from evalserve.service.jobs.callbacks import CallbackViewer
from evalserve.service.jobs.events import JobListener
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.db import Database


@dataclass
class WorkerContext:
    settings: Settings
    db: Database
    blobs: BlobStore
    celery: Celery | None = None  # publishes follow-up messages (webhook deliveries); None in plain tests
    listeners: Sequence[JobListener] = ()  # told when a job ends (``jobs.events``)
    callback_viewer: CallbackViewer | None = None  # what a job's callback carries, where not its document
    pid: int = field(default_factory=os.getpid)
    judgments: JudgmentsCache = field(default_factory=JudgmentsCache)  # parsed judgments kept between jobs


def context_for(app: Celery) -> WorkerContext:
    """The context of this process for ``app`` (rebuilt after a fork)."""
    ctx: WorkerContext | None = getattr(app, "_evalserve_context", None)
    if ctx is None or ctx.pid != os.getpid():
        settings: Settings = app.conf.evalserve_settings
        listeners: Sequence[JobListener] = app.conf.get("evalserve_job_listeners") or ()
        ctx = WorkerContext(settings, Database(settings.database_url), BlobStore(settings.blob_dir), app,
                            tuple(listeners), app.conf.get("evalserve_callback_viewer"))
        app._evalserve_context = ctx
    return ctx

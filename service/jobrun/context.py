"""What a worker process needs to run jobs -- settings, database, blob store -- built lazily per process (a
prefork child must not reuse connections opened by its parent before the fork)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from celery import Celery

from service.blobs import BlobStore
from service.config import Settings
from service.db import Database


@dataclass
class WorkerContext:
    settings: Settings
    db: Database
    blobs: BlobStore
    celery: Celery | None = None  # publishes follow-up messages (webhook deliveries); None in plain tests
    pid: int = field(default_factory=os.getpid)


def context_for(app: Celery) -> WorkerContext:
    """The context of this process for ``app`` (rebuilt after a fork)."""
    ctx: WorkerContext | None = getattr(app, "_evalserve_context", None)
    if ctx is None or ctx.pid != os.getpid():
        settings: Settings = app.conf.evalserve_settings
        ctx = WorkerContext(settings, Database(settings.database_url), BlobStore(settings.blob_dir), app)
        app._evalserve_context = ctx
    return ctx

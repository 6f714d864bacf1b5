"""What the workers tell the rest of the service when a job ends: a ``JobFinished`` event handed to the listeners
the process registered when it started (``jobrun.context.WorkerContext.listeners``; the workers' Celery app
registers the shared tasks' announcer). The runner knows no listener by name: generic job machinery never reaches
into a feature."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.db import Database


@dataclass(frozen=True)
class JobFinished:
    """Job ``job_id`` ended (succeeded or failed) on this worker; its row says how."""

    job_id: str


class JobListener(Protocol):
    """Records what a finished job means to a feature, in its own transaction; returns the webhook deliveries it
    recorded, which the runner publishes. A listener's failure is logged and never fails the job."""

    def __call__(self, db: Database, blobs: BlobStore, event: JobFinished) -> list[str]: ...

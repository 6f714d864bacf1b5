"""What a request's services share -- settings, database, blob store, job queue -- as one value passed down, not
globals (the web layer keeps it on the Flask app: ``web.context.state``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the rooms above core are only named here; whoever builds the state imports them
    from evalserve.service.core.config import Settings
    from evalserve.service.jobs.queue import JobQueue
    from evalserve.service.store.blobs import BlobStore
    from evalserve.service.store.db import Database


@dataclass
class ServiceState:
    settings: Settings
    db: Database
    blobs: BlobStore
    queue: JobQueue

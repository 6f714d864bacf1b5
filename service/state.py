"""What the API's views share, held on the Flask app (``app.extensions["evalserve"]``), not in globals."""

from __future__ import annotations

from dataclasses import dataclass

from flask import current_app

from service.blobs import BlobStore
from service.config import Settings
from service.db import Database
from service.queue import JobQueue


@dataclass
class ServiceState:
    settings: Settings
    db: Database
    blobs: BlobStore
    queue: JobQueue


def state() -> ServiceState:
    found: ServiceState = current_app.extensions["evalserve"]
    return found

"""What storing inputs needs -- settings (decode limits), the database and the blob store -- as a protocol, so the
same service functions run in a request (``ServiceState``) and in a command outside the API (``Stores``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from evalserve.service.core.config import Settings
from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.db import Database


class HasStores(Protocol):
    settings: Settings
    db: Database
    blobs: BlobStore


@dataclass
class Stores:
    """The stores of a command run outside the API (``evalserve collections import``)."""

    settings: Settings
    db: Database
    blobs: BlobStore

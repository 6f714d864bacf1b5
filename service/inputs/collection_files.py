"""A stored collection's files as engine inputs (judgments, intent weights, side inputs), read from the blob
store: what the workers evaluate against and what the API builds hierarchies from."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from evalserve.service.store.blobs import BlobStore
from evalserve.service.store.models import Collection
from evaluation.formats import Blob
from evaluation.formats.source import DecodeLimits


@dataclass(frozen=True)
class CollectionFiles:
    qrels: Blob
    qrels_format: str
    intent_weights: Blob | None = None
    side: dict[str, Blob] = field(default_factory=dict)


def collection_files(session: Session, blobs: BlobStore, collection: Collection,
                     limits: DecodeLimits | None = None) -> CollectionFiles:
    """Load every file of ``collection`` under the file name it was uploaded with, decoded under ``limits``
    (the deployment's, ``Settings.decode_limits``; the engine's defaults when None)."""
    weights = None
    if collection.intent_weights_sha256:
        weights = Blob.from_bytes(blobs.get(session, collection.intent_weights_sha256),
                                  collection.intent_weights_filename or "intent-weights", limits)
    side = {kind: Blob.from_bytes(blobs.get(session, info["sha256"]), info["filename"], limits)
            for kind, info in (collection.side_inputs or {}).items()}
    qrels = Blob.from_bytes(blobs.get(session, collection.qrels_sha256), collection.qrels_filename, limits)
    return CollectionFiles(qrels, collection.qrels_format, weights, side)

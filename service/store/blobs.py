"""Content-addressed blob storage: the same bytes are stored once under their SHA-256, in the database (default:
every worker on every machine can read them) or in a directory (``EVALSERVE_BLOB_DIR``, for large deployments)."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from evalserve.service.store.db import savepoint
from evalserve.service.store.models import BlobRow


class BlobStore:
    """Puts and gets immutable bytes by hash, inside the caller's database session (so the row that refers to
    a blob and the blob itself commit together)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory

    def put(self, session: Session, data: bytes) -> str:
        """Store ``data`` (once) and return its SHA-256; files are synced to disk before the row is written."""
        sha = hashlib.sha256(data).hexdigest()
        if session.get(BlobRow, sha) is not None:
            return sha
        if self.directory is not None:
            self._write_file(sha, data)
        try:
            with savepoint(session):
                session.add(BlobRow(sha256=sha, size=len(data), data=None if self.directory else data))
        except IntegrityError:  # stored concurrently by another request: same bytes, same row
            pass
        return sha

    def get(self, session: Session, sha: str) -> bytes:
        row = session.get(BlobRow, sha)
        if row is None:
            raise KeyError(sha)
        if row.data is not None:
            return bytes(row.data)
        if self.directory is None:
            raise KeyError(f"blob {sha} is stored in a blob directory, but EVALSERVE_BLOB_DIR is not set")
        return self._path(sha).read_bytes()

    def _path(self, sha: str) -> Path:
        assert self.directory is not None
        return self.directory / sha[:2] / sha

    def _write_file(self, sha: str, data: bytes) -> None:
        path = self._path(sha)
        if path.exists():
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

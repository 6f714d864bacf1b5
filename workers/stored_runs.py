"""A job's stored runs as engine inputs, fetched one at a time: ``load_inputs`` parses each run as it reaches
it, so a job holds one run's bytes (as stored and decompressed) at a time, never all of them, and no database
session keeps a blob row alive while the engine works (an MS MARCO run is 85 MB gzipped, 250 MB as text)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from evaluation.formats import Blob
from service.models import RunRecord
from workers.context import WorkerContext


class StoredRuns(Sequence[Blob]):
    """The runs ``run_ids`` of a job, in order; item ``i`` is read from the blob store when it is asked for."""

    def __init__(self, ctx: WorkerContext, run_ids: Sequence[str]) -> None:
        self.ctx = ctx
        with ctx.db.session() as s:
            records = [s.get(RunRecord, run_id) for run_id in run_ids]
            assert all(r is not None for r in records)
            self.files = [(r.sha256, r.filename) for r in records if r is not None]

    def __len__(self) -> int:
        return len(self.files)

    @overload
    def __getitem__(self, index: int) -> Blob: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Blob]: ...
    def __getitem__(self, index: int | slice) -> Blob | Sequence[Blob]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        sha, filename = self.files[index]
        with self.ctx.db.session() as s:
            data = self.ctx.blobs.get(s, sha)
        return Blob.from_bytes(data, filename, self.ctx.settings.decode_limits)

    def __iter__(self) -> Iterator[Blob]:
        return (self[i] for i in range(len(self)))

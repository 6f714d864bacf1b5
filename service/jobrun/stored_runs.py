"""A job's stored runs as engine inputs, fetched one at a time: ``load_inputs`` parses each run as it reaches
it, so a job holds one run's bytes at a time, never all of them, and no database session keeps a blob row alive
while the engine works (an MS MARCO run is 85 MB gzipped, 250 MB as text). A large run is parsed from a
temporary file (``inputs.streamed_runs``)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from evalserve.service.inputs.collection_files import CollectionFiles
from evalserve.service.inputs.streamed_runs import STREAM_FROM_BYTES, parse_streamed
from evalserve.service.jobrun.context import WorkerContext
from evalserve.service.store.models import RunRecord
from evaluation.formats import Blob
from evaluation.formats.run_formats import parse_run_as
from evaluation.model import Run
from evaluation.pipeline import Opened, file_label, file_label_of
from evaluation.problems import InputError


class StoredRuns(Sequence[Opened | Run]):
    """The runs ``run_ids`` of a job, in order; item ``i`` is read from the blob store when it is asked for: a
    parsed ``Run`` (a large run read cleanly from a file, or a run stored in another format than TREC, read in
    its stored format) or a ``Blob`` for ``load_inputs`` to parse."""

    def __init__(self, ctx: WorkerContext, run_ids: Sequence[str]) -> None:
        self.ctx = ctx
        with ctx.db.session() as s:
            records = [s.get(RunRecord, run_id) for run_id in run_ids]
            assert all(r is not None for r in records)
            self.files = [(r.sha256, r.filename) for r in records if r is not None]
            self.formats = [r.run_format for r in records if r is not None]

    @property
    def inputs(self) -> list[tuple[str, str]]:
        """(file label, sha256) of each run, as ``meta.inputs`` lists them."""
        return [(file_label_of(filename), sha) for sha, filename in self.files]

    def __len__(self) -> int:
        return len(self.files)

    @overload
    def __getitem__(self, index: int) -> Opened | Run: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Opened | Run]: ...
    def __getitem__(self, index: int | slice) -> Opened | Run | Sequence[Opened | Run]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        sha, filename = self.files[index]
        with self.ctx.db.session() as s:
            data = self.ctx.blobs.get(s, sha)
        limits = self.ctx.settings.decode_limits
        if self.formats[index] != "trec":
            return _read_as(Blob.from_bytes(data, filename, limits), self.formats[index])
        if len(data) >= STREAM_FROM_BYTES:
            run = parse_streamed(data, filename, limits)
            if run is not None:
                return run
        return Blob.from_bytes(data, filename, limits)

    def __iter__(self) -> Iterator[Opened | Run]:
        return (self[i] for i in range(len(self)))


def _read_as(blob: Blob, fmt: str) -> Run | InputError:
    """A stored run in format ``fmt`` (validated on upload), or the errors reading it met (reported by the job)."""
    parsed = parse_run_as(blob, fmt)
    if parsed.value is None or parsed.errors:
        return InputError(parsed.problems, parsed.omitted_errors)
    return parsed.value


def input_files(files: CollectionFiles, runs: StoredRuns) -> dict[str, str]:
    """``meta.inputs`` of a job, as ``load_inputs`` records them: judgments, intent weights, side inputs, runs."""
    blobs = [files.qrels, *([files.intent_weights] if files.intent_weights is not None else []), *files.side.values()]
    found = {file_label(blob): blob.sha256 for blob in blobs}
    for label, sha in runs.inputs:
        found[label] = sha
    return found

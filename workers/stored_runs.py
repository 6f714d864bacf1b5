"""A job's stored runs as engine inputs, fetched one at a time: ``load_inputs`` parses each run as it reaches
it, so a job holds one run's bytes at a time, never all of them, and no database session keeps a blob row alive
while the engine works (an MS MARCO run is 85 MB gzipped, 250 MB as text).

A large run (``STREAM_FROM_BYTES`` as stored) is inflated once into a temporary file and parsed from that path,
which the engine reads in bounded blocks: no 250 MB text copy, and one inflate pass where ``Blob.from_bytes``
makes two for inputs over 32 MB. The run was validated under the same limits when it was uploaded; anything
unusual here -- over a limit, a byte-order mark, a corrupt stream, any problem reported by the parser -- falls
back to the ``Blob`` path, which reports exactly what one worker always reported.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import zlib
from collections.abc import Iterator, Sequence
from typing import overload

from evaluation.formats import Blob, parse_run
from evaluation.formats.source import DEFAULT_LIMITS, GZIP_MAGIC, UTF8_BOM, DecodeLimits, display_name
from evaluation.model import Run
from evaluation.pipeline import file_label, file_label_of
from service.collection_files import CollectionFiles
from service.models import RunRecord
from workers.context import WorkerContext

#: stored runs at least this large are parsed from a temporary file
STREAM_FROM_BYTES = 1 << 20
_IN_STEP = 1 << 16  # gzip bytes fed per step
_OUT_STEP = 1 << 20  # inflated bytes per step at most


class StoredRuns(Sequence[Blob | Run]):
    """The runs ``run_ids`` of a job, in order; item ``i`` is read from the blob store when it is asked for: a
    parsed ``Run`` (a large run read cleanly from a file) or a ``Blob`` for ``load_inputs`` to parse."""

    def __init__(self, ctx: WorkerContext, run_ids: Sequence[str]) -> None:
        self.ctx = ctx
        with ctx.db.session() as s:
            records = [s.get(RunRecord, run_id) for run_id in run_ids]
            assert all(r is not None for r in records)
            self.files = [(r.sha256, r.filename) for r in records if r is not None]

    @property
    def inputs(self) -> list[tuple[str, str]]:
        """(file label, sha256) of each run, as ``meta.inputs`` lists them."""
        return [(file_label_of(filename), sha) for sha, filename in self.files]

    def __len__(self) -> int:
        return len(self.files)

    @overload
    def __getitem__(self, index: int) -> Blob | Run: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Blob | Run]: ...
    def __getitem__(self, index: int | slice) -> Blob | Run | Sequence[Blob | Run]:
        if isinstance(index, slice):
            return [self[i] for i in range(len(self))[index]]
        sha, filename = self.files[index]
        with self.ctx.db.session() as s:
            data = self.ctx.blobs.get(s, sha)
        limits = self.ctx.settings.decode_limits
        if len(data) >= STREAM_FROM_BYTES:
            run = parse_streamed(data, filename, limits)
            if run is not None:
                return run
        return Blob.from_bytes(data, filename, limits)

    def __iter__(self) -> Iterator[Blob | Run]:
        return (self[i] for i in range(len(self)))


def input_files(files: CollectionFiles, runs: StoredRuns) -> dict[str, str]:
    """``meta.inputs`` of a job, as ``load_inputs`` records them: judgments, intent weights, side inputs, runs."""
    blobs = [files.qrels, *([files.intent_weights] if files.intent_weights is not None else []), *files.side.values()]
    found = {file_label(blob): blob.sha256 for blob in blobs}
    for label, sha in runs.inputs:
        found[label] = sha
    return found


def parse_streamed(data: bytes, filename: str, limits: DecodeLimits) -> Run | None:
    """The run in ``data`` parsed from a temporary file, or None when it is not a clean run within ``limits``
    (the caller then takes the ``Blob`` path)."""
    if limits.max_line_bytes < DEFAULT_LIMITS.max_line_bytes:  # the file reader checks the default cap only
        return None
    fd, path = tempfile.mkstemp(prefix="evalserve-run-")
    try:
        with os.fdopen(fd, "wb") as out:
            if not _write_text(data, out, limits):
                return None
        parsed = parse_run(path, name=display_name(filename))
        if parsed.value is None or parsed.problems or parsed.omitted_errors or parsed.omitted_warnings:
            return None
        return parsed.value
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def _write_text(data: bytes, out: object, limits: DecodeLimits) -> bool:
    """Write the text of ``data`` (inflated in one pass when gzip, every member) to ``out``; False when it
    passes ``limits`` in bytes or lines, starts with a byte-order mark or is not valid gzip."""
    write = out.write  # type: ignore[attr-defined]
    if not data.startswith(GZIP_MAGIC):
        if len(data) > limits.max_bytes or data.count(b"\n") > limits.max_lines or data.startswith(UTF8_BOM):
            return False
        write(data)
        return True
    total = lines = pos = 0
    view = memoryview(data)
    inflate = zlib.decompressobj(wbits=31)
    try:
        while True:
            if inflate.eof:  # a member ended: another may follow
                pos -= len(inflate.unused_data)
                if pos >= len(data):
                    break
                inflate = zlib.decompressobj(wbits=31)
            if inflate.unconsumed_tail:
                chunk: bytes | memoryview = inflate.unconsumed_tail
            elif pos < len(data):
                chunk = view[pos:pos + _IN_STEP]
                pos += len(chunk)
            else:
                return False  # truncated
            piece = inflate.decompress(chunk, _OUT_STEP)
            if total == 0 and piece and UTF8_BOM.startswith(piece[:3]):
                return False
            total += len(piece)
            lines += piece.count(b"\n")
            if total > limits.max_bytes or lines > limits.max_lines:
                return False
            write(piece)
    except zlib.error:
        return False
    return total > 0

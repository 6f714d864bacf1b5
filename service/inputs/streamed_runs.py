"""Large runs parsed from a temporary file instead of from bytes in memory: the upload (or stored blob) is
inflated once into the file, checked under the deployment's ``DecodeLimits`` as it is written, and read by the
engine's bounded file reader (``evaluation.formats.parse_run(path)``). An MS MARCO run (7 million lines, 84 MB
gzipped) then never exists as 250 MB of text in memory, and is inflated once where ``Blob.from_bytes`` inflates an
input over 32 MB twice (measured in process on that run: 665 MB peak RSS and 4.1 s, against 913 MB and 4.9 s).

Only a clean run takes this path: anything else -- a limit passed, a NUL byte, a corrupt stream, a byte-order
mark, any problem the parser reports, even a warning -- returns None, and the caller reads the bytes the usual way
(``Blob.from_bytes``), which reports exactly what it always reported.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import zlib
from typing import BinaryIO

from evalserve.service.inputs.inflight import progress
from evaluation.formats import parse_run
from evaluation.formats.source import GZIP_MAGIC, UTF8_BOM, DecodeLimits, _Meter, display_name
from evaluation.model import Run
from evaluation.problems import InputError

#: runs at least this large (as uploaded or stored) are parsed from a temporary file
STREAM_FROM_BYTES = 1 << 20
_IN_STEP = 1 << 16  # gzip bytes fed per step
_OUT_STEP = 1 << 20  # inflated bytes per step at most


def parse_streamed(data: bytes, filename: str, limits: DecodeLimits) -> Run | None:
    """The run in ``data`` parsed from a temporary file, or None when it is not a clean run within ``limits``
    (the caller then takes the ``Blob`` path)."""
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


def _write_text(data: bytes, out: BinaryIO, limits: DecodeLimits) -> bool:
    """Write the text of ``data`` (inflated in one pass when gzip, every member) to ``out``, metered as
    ``Blob.from_bytes`` meters it; False when the meter objects, it starts with a byte-order mark or is not
    valid gzip."""
    meter = _Meter(limits, "run", compressed=data.startswith(GZIP_MAGIC))
    try:
        if not meter.compressed:
            if data.startswith(UTF8_BOM):
                return False
            progress(len(data))
            for lo in range(0, len(data), _OUT_STEP):
                meter.feed(data, lo, min(lo + _OUT_STEP, len(data)))
            meter.finish()
            out.write(data)
            return True
        return _inflate_into(data, out, meter)
    except InputError:
        return False


def _inflate_into(data: bytes, out: BinaryIO, meter: _Meter) -> bool:
    """Inflate every gzip member of ``data`` into ``out`` in bounded steps (a bomb is refused by the meter
    after one step past the cap); False when the stream is corrupt or truncated."""
    pos = 0
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
            if meter.total == 0 and piece and UTF8_BOM.startswith(piece[:3]):
                return False
            meter.feed(piece, 0, len(piece))
            progress(meter.total)  # the request's budget: a 503 when this no longer fits
            out.write(piece)
    except zlib.error:
        return False
    meter.finish()
    return meter.total > 0

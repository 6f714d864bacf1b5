"""Large runs parsed as they stream from their stored bytes instead of from a decompressed copy in memory: the
engine's block reader (``evaluation.formats.RunFile(data=...)``) inflates a gzip run a block at a time, under the
deployment's ``DecodeLimits``, so an MS MARCO run (7 million lines, 84 MB gzipped) never exists as 250 MB of text
in memory and is inflated once (``Blob.from_bytes`` inflates an input over 32 MB twice).

Only a clean run takes this path: anything else -- a limit passed, a NUL byte, a corrupt stream, a byte-order
mark, any problem the parser reports, even a warning -- returns None, and the caller reads the bytes the usual way
(``Blob.from_bytes``), which reports exactly what it always reported.
"""

from __future__ import annotations

from evaluation.formats.source import DecodeLimits
from evaluation.formats.trec_run import RunFile, parse_run_file
from evaluation.model import Run

#: runs at least this large (as uploaded or stored) are parsed as they stream
STREAM_FROM_BYTES = 1 << 20


def parse_streamed(data: bytes, filename: str, limits: DecodeLimits) -> Run | None:
    """The run in ``data`` read block by block, or None when it is not a clean run within ``limits`` (the caller
    then takes the ``Blob`` path)."""
    parsed, _ = parse_run_file(RunFile(filename, limits=limits, data=data))
    if parsed.value is None or parsed.problems or parsed.omitted_errors or parsed.omitted_warnings:
        return None
    return parsed.value

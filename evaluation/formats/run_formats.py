"""Which reader reads a run: TREC (the default, and the fast path), EvALL's ranking output or PyEvALL's JSON or
TSV predictions -- chosen by name, or told from the text's first line (``auto``; docs/formats.md).

Detection looks at the first non-blank, non-comment line only: ``[`` starts PyEvALL JSON; otherwise a line of
six whitespace-separated fields is TREC, and a line of two or three tab-separated fields is EvALL or PyEvALL
TSV. Anything else is read as TREC, whose reader then says what is wrong.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

from evaluation.enums import StrEnum
from evaluation.formats.evall_run import parse_evall_run
from evaluation.formats.pyevall_run import parse_pyevall_json, parse_pyevall_tsv
from evaluation.formats.source import GZIP_MAGIC, UTF8_BOM, Blob
from evaluation.formats.trec_run import parse_run
from evaluation.model import Run
from evaluation.problems import FormatError, Parsed


class RunFormat(StrEnum):
    """A run file layout (members are the names the CLI's ``--run-format`` and the API's ``run_format`` take)."""

    AUTO = "auto"  # one of the others, detected from the first line
    TREC = "trec"  # qid Q0 docno rank score tag
    EVALL = "evall"  # EvALL's ranking output: TSV test case, id in rank order
    PYEVALL_JSON = "pyevall-json"  # PyEvALL's JSON predictions
    PYEVALL_TSV = "pyevall-tsv"  # PyEvALL's TSV predictions: test_case, id, value (the position)


#: Run file layouts; ``auto`` detects one of the others from the first line.
RUN_FORMATS: tuple[str, ...] = tuple(f.value for f in RunFormat)
_READERS: dict[str, Callable[[Blob], Parsed[Run]]] = {
    RunFormat.TREC: parse_run,
    RunFormat.EVALL: parse_evall_run,
    RunFormat.PYEVALL_JSON: parse_pyevall_json,
    RunFormat.PYEVALL_TSV: parse_pyevall_tsv,
}
_HEAD = 4096  # bytes of text detection looks at
_TREC_FIELDS = 6
_TAB_FIELDS = {2: RunFormat.EVALL, 3: RunFormat.PYEVALL_TSV}


def check_run_format(fmt: str) -> None:
    """Refuse an unknown format name (a programming or request error, not a file problem)."""
    if fmt not in RUN_FORMATS:
        raise FormatError(f"unknown run format {fmt!r}; choose one of {', '.join(RUN_FORMATS)}")


def detect_run_format(head: bytes) -> RunFormat:
    """The format of a run whose text begins with ``head`` (a few kilobytes are enough; never ``auto``)."""
    if head.startswith(UTF8_BOM):
        head = head[len(UTF8_BOM):]
    if head.lstrip().startswith(b"["):
        return RunFormat.PYEVALL_JSON
    lines = head.splitlines()
    if len(head) >= _HEAD and len(lines) > 1:
        lines = lines[:-1]  # the last line may be cut
    first = next((line for line in lines if line.strip() and not line.lstrip().startswith(b"#")), b"")
    if len(first.split()) == _TREC_FIELDS:
        return RunFormat.TREC
    return _TAB_FIELDS.get(len(first.rstrip(b"\r\n").split(b"\t")), RunFormat.TREC)


def resolve_run_format(fmt: str, head: bytes) -> str:
    """``fmt`` itself, or for ``auto`` the format detected from ``head``."""
    check_run_format(fmt)
    return detect_run_format(head) if fmt == RunFormat.AUTO else fmt


def parse_run_as(blob: Blob, fmt: str = RunFormat.AUTO) -> Parsed[Run]:
    """Read a run in format ``fmt`` (``auto``: detected from its first line), collecting every problem."""
    return _READERS[resolve_run_format(fmt, blob.data[:_HEAD])](blob)


def file_head(path: str) -> bytes:
    """The first few kilobytes of a file's text (gzip inflated), for ``detect_run_format``; b"" when it cannot
    be read (the reader then reports why)."""
    try:
        with open(path, "rb") as f:
            return text_head(f.read(_HEAD))
    except OSError:
        return b""


def text_head(raw: bytes) -> bytes:
    """The start of the text of ``raw``, the first bytes of a file as stored (gzip inflated as far as they go)."""
    if not raw.startswith(GZIP_MAGIC):
        return raw[:_HEAD]
    try:
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS).decompress(raw[:_HEAD * 4], _HEAD)
    except zlib.error:
        return b""

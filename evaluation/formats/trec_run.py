"""Reader for TREC run files: ``qid Q0 docno rank score tag``, whitespace separated, plain or gzip.

Errors (the run is rejected): wrong number of fields, a score that is not a number or is NaN, the same docno
twice within a topic. Warnings: a rank column that is not an integer (it matters only for ``ties=rank``),
more than one run tag. Lines starting with ``#`` and blank lines are skipped.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from evaluation.file_digest import FileDigest
from evaluation.formats.diagnose import TREC_RUN
from evaluation.formats.distinct import sorted_distinct
from evaluation.formats.keys import (
    duplicate_rows,
    has_duplicates,
    hash_words,
    intern_runs,
    intern_words,
    label_runs,
)
from evaluation.formats.lexer import (
    PADDED_FACTOR,
    PADDED_MIN,
    Rows,
    decode,
    field_starts,
    gather_words,
    report_fields,
    select_rows,
    simple_rows,
    tokenize,
)
from evaluation.formats.numbers import parse_floats, parse_ints
from evaluation.formats.source import (
    DEFAULT_LIMITS,
    GZIP_MAGIC,
    UTF8_BOM,
    Blob,
    DecodeLimits,
    SourceLike,
    display_name,
    load,
)
from evaluation.model import DOCNO_HASHES, Run
from evaluation.problems import InputError, Parsed, ProblemLog
from evaluation.task_pool import TaskPool, in_order

COLUMNS = 6
_CHUNK_MIN = 1 << 20  # bytes of text per chunk in the plain-layout reader
_CHUNK_MAX = 1 << 21
_LINE_ROOM = 1 << 16  # spare room in the read buffer for a line cut at the end of a read
_READ_MIN = 1 << 23  # read buffer size, bytes
_READ_MAX = 1 << 24
_HASH_ASIDE = 1 << 22  # reads at least this large are hashed on a second thread while they are parsed
_DOCNO_MAX = 256  # longer docnos take the general path (which bounds the padded docno column)


def parse_run(source: SourceLike, name: str | None = None) -> Parsed[Run]:
    """Read a run, collecting every problem; ``name`` defaults to the file name without ``.gz``."""
    if not isinstance(source, Blob) and os.fspath(source) != "-":
        label = os.fspath(source)
        return parse_run_file(RunFile(label, name or (display_name(label) if not label.startswith("<") else label)))[0]
    try:
        blob = load(source)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems))
    run_name = name or (display_name(blob.name) if not blob.name.startswith("<") else blob.name)
    log = ProblemLog(source=blob.name)
    run = _parse(blob, run_name, log)
    return Parsed.from_log(run, log)


@dataclass(frozen=True)
class RunFile:
    """A run to be read straight from a file (plain or gzip) in bounded memory, under ``limits``: from ``path``,
    or from ``data`` (then ``path`` only names it); ``run_name`` defaults to the file name without ``.gz``
    (what ``parse_run`` names it)."""

    path: str
    run_name: str | None = None
    limits: DecodeLimits = DEFAULT_LIMITS
    data: bytes | None = None  # the file's bytes as stored (e.g. a stored blob), read instead of ``path``
    digest: FileDigest | None = None  # the file's SHA-256, already being computed (``path`` only)

    @property
    def name(self) -> str:
        """The input's name in messages and ``meta.inputs`` (a Blob's ``name``): the path as given."""
        return self.path


def parse_run_file(source: RunFile, pool: TaskPool | None = None) -> tuple[Parsed[Run], str | None]:
    """Read a run file and the SHA-256 of its bytes as stored (None when it could not be opened); with a
    ``pool``, the chunks of each block read are parsed on its threads (the same run either way).

    A file in the usual layout is read block by block (gzip inflated block by block) and hashed as it is read
    (or its hash is taken from ``source.digest``): memory holds one read buffer and the run's own arrays, never
    the file. Any other file -- a problem to
    report, an unusual layout, a limit passed -- is read whole the general way (``load``), which reports it.
    """
    label = source.path
    name = source.run_name or (display_name(label) if not label.startswith("<") else label)
    hasher = hashlib.sha256()
    if source.data is None:
        given = source.digest  # then the bytes read here need no hashing
        chunks = _file_chunks(label, source.limits, hasher if given is None else None)
    else:
        given = None
        chunks = _bytes_chunks(source.data, source.limits, hasher)
    try:
        streamed = _parse_plain(chunks, name, source.limits, _text_size(source), pool)
    except _NotTaken:
        streamed = None
    if streamed is not None:
        digest = hasher.hexdigest() if given is None else given.result()
        if digest is not None:  # (None: the file could not be hashed to its end; read it the general way)
            return Parsed.from_log(streamed, ProblemLog(source=label)), digest
    try:
        if source.data is None:
            blob = load(label, limits=source.limits)
        else:
            blob = Blob.from_bytes(source.data, label, source.limits)
    except InputError as exc:
        return Parsed(None, tuple(exc.problems)), None
    log = ProblemLog(source=blob.name)
    run = _parse(blob, name, log)
    return Parsed.from_log(run, log), blob.sha256


def _text_size(source: RunFile) -> int | None:
    """The length of a run's text, to size its columns: the file's size, or for gzip the length its last member's
    trailer gives (modulo 4 GiB; for one member, the whole text's). None when it cannot be told."""
    try:
        if source.data is not None:
            head, size, tail = source.data[:2], len(source.data), source.data[-4:]
        else:
            if not stat.S_ISREG(os.stat(source.path).st_mode):
                return None  # a pipe: reading its head would take it from the parser
            with open(source.path, "rb") as f:
                head, size = f.read(2), os.fstat(f.fileno()).st_size
                if head == GZIP_MAGIC and size >= 4:
                    f.seek(-4, os.SEEK_END)
                tail = f.read(4)
    except OSError:
        return None
    if head != GZIP_MAGIC:
        return size
    return int.from_bytes(tail, "little") if len(tail) == 4 else None


def read_run(source: SourceLike, name: str | None = None) -> Run:
    """Read a run or raise InputError listing its problems."""
    return parse_run(source, name).unwrap()


def _parse(blob: Blob, name: str, log: ProblemLog) -> Run:
    clean = _parse_plain(_memory_chunks(blob.data), name, text_size=len(blob.data))
    if clean is not None:
        return clean
    rows = select_rows(tokenize(blob.data), COLUMNS, log, "TREC run", extra_ok=True, explain=TREC_RUN)
    if len(rows) == 0 and not log.has_errors:
        log.add("empty-run", "the run has no result lines")
    scores = _scores(rows, log)
    ranks, bad_rank = parse_ints(rows.buf, *rows.column(3))
    if bad_rank.any():
        report_fields(log, rows, bad_rank, 3, "rank-not-integer", "rank {!r} is not an integer", "warning")
    topics, topic = intern_words(rows.words(0))
    docno = rows.strings(2)
    dup, first = duplicate_rows(topic, docno)
    if dup.size:
        shown = min(dup.size, log.room())
        log.count_omitted(int(dup.size - shown))
        lines, cols = rows.line, rows.columns(2)
        for d, f in zip(dup[:shown].tolist(), first[:shown].tolist()):
            log.add(
                "duplicate-docno",
                f"document {docno[d].decode('utf-8', 'replace')} appears twice for topic {topics[topic[d]]}"
                f" (first on line {lines[f]})",
                line=int(lines[d]),
                column=int(cols[d]),
            )
    tags = _tags(rows)
    if len(tags) > 1:
        log.add(
            "multiple-tags",
            f"the run has {len(tags)} different tags ({', '.join(tags[:5])}); results are named by file",
            severity="warning",
        )
    return Run(name, topics, topic, docno, scores, ranks, tuple(tags), not bool(bad_rank.any()))


#: Batches of (buffer, begin, end) spans of whole lines; a batch's spans stay valid until the next batch is
#: asked for (a file's read buffer is refilled then), so the spans of one batch can be parsed at the same time.
Chunks = Iterator[list[tuple[np.ndarray, int, int]]]
_Source = io.FileIO | io.BytesIO  # what the block reader reads from: a file, or a file's bytes in memory


class _NotTaken(Exception):
    """A file the streaming reader gave up on after yielding part of it: the general path reads it whole."""


def _memory_chunks(data: bytes) -> Chunks:
    """(buffer, begin, end) spans of whole lines of ``data``, about a megabyte each."""
    yield _line_spans(np.frombuffer(data, dtype=np.uint8), 0, len(data))


def _line_spans(buf: np.ndarray, begin: int, end: int) -> list[tuple[np.ndarray, int, int]]:
    """``buf[begin:end]`` (whole lines) cut at newlines into spans of about ``_CHUNK_MIN`` to ``_CHUNK_MAX``."""
    step = min(max((end - begin) // 8, _CHUNK_MIN), _CHUNK_MAX)
    spans = []
    while end - begin > step:
        cut = _last_line_end(buf, begin + step)
        if cut <= begin:
            break
        spans.append((buf, begin, cut))
        begin = cut
    if end > begin:
        spans.append((buf, begin, end))
    return spans


def _file_chunks(path: str, limits: DecodeLimits = DEFAULT_LIMITS, hasher: Any = None) -> Chunks:
    """Whole lines of a file (plain, or gzip inflated as it is read), read in large blocks into one buffer.

    Every byte read from the file goes to ``hasher`` (a ``hashlib`` object) when one is given. Yields nothing
    at all for files it does not take (missing, unreadable, not a regular file, marked with a byte-order mark,
    empty, larger than ``limits`` allow), and raises ``_NotTaken`` when it gives up half way (a read error, a
    damaged or truncated gzip stream, more decompressed bytes than allowed, a line longer than the limit): the
    caller then reads them the general way, which reports why. Each span is valid until the next one. The
    buffer (8-16 MB, so NumPy backs it with huge pages) is released at the end, which also tells the C
    allocator that blocks this large come and go (its adaptive thresholds then keep the smaller arrays of the
    following work in reused memory instead of returning and re-faulting it).
    """
    try:
        handle = open(path, "rb", buffering=0)  # noqa: SIM115 - closed below; a generator holds it
    except OSError:
        return
    with handle:
        try:
            info = os.fstat(handle.fileno())
            magic = handle.read(2) if stat.S_ISREG(info.st_mode) else b""
            handle.seek(0)
        except OSError:
            return
        if not magic or info.st_size > limits.max_bytes:
            return
        yield from _stream_chunks(handle, magic == GZIP_MAGIC, info.st_size, limits, hasher)


def _bytes_chunks(data: bytes, limits: DecodeLimits, hasher: Any) -> Chunks:
    """``_file_chunks`` for a file's bytes already in memory: gzip is inflated a block at a time (the output is
    never held whole), plain text is split where it lies."""
    if len(data) > limits.max_bytes or not data:
        return
    if data.startswith(GZIP_MAGIC):
        yield from _stream_chunks(io.BytesIO(data), True, len(data), limits, hasher)
        return
    if UTF8_BOM.startswith(data[:3]):
        return
    hasher.update(data)
    yield from _memory_chunks(data)


def _stream_chunks(handle: _Source, gzipped: bool, size: int, limits: DecodeLimits, hasher: Any) -> Chunks:
    """The spans of whole lines read from ``handle`` (positioned at the start; ``size`` bytes as stored)."""
    source: _Plain | _Inflating
    if gzipped:
        source, size = _Inflating(handle, hasher, limits.max_bytes), _READ_MAX
    else:
        source = _Plain(handle, hasher)
    buf = np.empty(min(max(size + _LINE_ROOM, _READ_MIN), _READ_MAX), dtype=np.uint8)
    kept = 0  # bytes of an unfinished line carried over from the previous read
    first = True
    while True:
        got = source.readinto(buf[kept:].data)
        filled = kept + got
        if first:
            head = bytes(buf[: min(filled, 3)])
            if not head or head.startswith(GZIP_MAGIC) or UTF8_BOM.startswith(head[:3]):
                return
            first = False
        if not got:
            if filled:
                yield _line_spans(buf, 0, filled)
            return
        end = _last_line_end(buf, filled)
        if end == 0:  # a line longer than the buffer: make room and read on (up to the line cap)
            if filled > limits.max_line_bytes:
                raise _NotTaken
            if filled == buf.size:
                buf = np.concatenate((buf, np.empty(buf.size, dtype=np.uint8)))
            kept = filled
            continue
        yield _line_spans(buf, 0, end)
        kept = filled - end
        if isinstance(source, _Plain):
            source.wait()
        buf[:kept] = buf[end:filled]


class _Plain:
    """``readinto`` over a plain file, passing every byte read to the hasher -- on a second thread for large
    reads (``hashlib`` releases the GIL), so a block is hashed while it is parsed; ``wait`` before the block's
    bytes are overwritten."""

    def __init__(self, handle: _Source, hasher: Any) -> None:
        self._handle = handle
        self._hasher = hasher
        self._hashing: threading.Thread | None = None

    def readinto(self, view: memoryview) -> int:
        """Fill ``view`` as far as one read goes; 0 at the end of the file (every byte hashed by then)."""
        self.wait()
        try:
            got = self._handle.readinto(view) or 0
        except OSError:
            raise _NotTaken from None
        if self._hasher is not None and got:
            if got < _HASH_ASIDE:
                self._hasher.update(view[:got])
            else:
                self._hashing = threading.Thread(target=self._hasher.update, args=(view[:got],), daemon=True)
                self._hashing.start()
        return got

    def wait(self) -> None:
        """Until the last block read is hashed."""
        if self._hashing is not None:
            self._hashing.join()
            self._hashing = None


class _Inflating:
    """``readinto`` over the decompressed bytes of every gzip member of a file, in bounded steps, passing the
    compressed bytes read to the hasher; damage, truncation, trailing bytes or more than ``max_bytes`` of
    output raise ``_NotTaken`` (the general reader then says which)."""

    def __init__(self, handle: _Source, hasher: Any, max_bytes: int) -> None:
        self._handle = handle
        self._hasher = hasher
        self._left = max_bytes
        self._inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        self._pending = b""  # compressed bytes not yet given to the inflater

    def _read(self) -> bytes:
        try:
            data = self._handle.read(1 << 20) or b""
        except OSError:
            raise _NotTaken from None
        if self._hasher is not None and data:
            self._hasher.update(data)
        return data

    def readinto(self, view: memoryview) -> int:
        """Fill ``view`` with decompressed bytes; fewer only at the end of the last member (0 after it)."""
        filled = 0
        try:
            while filled < len(view):
                if self._inflater.eof:
                    rest = self._inflater.unused_data or self._read()
                    if not rest:
                        break  # the end of the file after a whole member
                    if not rest.startswith(GZIP_MAGIC) and len(rest) >= 2:
                        raise _NotTaken  # trailing bytes that are not another member
                    self._inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
                    self._pending = rest
                if not self._pending:
                    self._pending = self._read()
                    if not self._pending:
                        raise _NotTaken  # truncated
                out = self._inflater.decompress(self._pending, len(view) - filled)
                self._pending = b"" if self._inflater.eof else self._inflater.unconsumed_tail
                view[filled : filled + len(out)] = out
                filled += len(out)
        except zlib.error:
            raise _NotTaken from None
        self._left -= filled
        if self._left < 0:
            raise _NotTaken
        return filled


def _last_line_end(buf: np.ndarray, filled: int) -> int:
    """Offset just after the last newline in ``buf[:filled]`` (0 when there is none)."""
    span = 256
    while True:
        lo = max(0, filled - span)
        at = np.flatnonzero(buf[lo:filled] == 10)
        if at.size:
            return lo + int(at[-1]) + 1
        if lo == 0:
            return 0
        span *= 16


def _parse_plain(chunks: Chunks, name: str, limits: DecodeLimits = DEFAULT_LIMITS,
                 text_size: int | None = None, pool: TaskPool | None = None) -> Run | None:
    """The run of a problem-free file in the usual layout, read chunk by chunk; None for any other file.

    Usual layout: six fields per line, single-byte gaps, no comments or blank lines, one tag, fields of
    ordinary length, within the decode limits (line count and length). Chunks of whole lines keep every
    intermediate array small (cache-resident, reused by the allocator); each chunk's values go straight into
    the run's columns (``_Column``), so the run is held once; ``text_size`` (the text's length, if known) sizes
    them from the first chunk's lines per byte, so they are seldom copied to grow. With a ``pool`` the chunks
    of one batch are parsed at the same time; they are added in file order either way.
    Whenever anything would need a message -- a bad number, a duplicate, several tags -- this returns None and
    the general path reads (and reports) it.
    """
    heads: list[np.ndarray] = []  # per chunk, one entry per block of lines of one topic: small
    runs: list[np.ndarray] = []
    docnos, hashes, scores, ranks = _Column(), _Column(), _Column(), _Column()
    tag: np.ndarray | None = None
    lines = 0
    size = 0
    for batch in chunks:
        parsed = in_order(pool, [partial(_chunk_columns, *span, limits) for span in batch])
        for (_, begin, end), chunk in zip(batch, parsed):
            if chunk is None:
                return None
            size += end - begin
            if not lines and text_size:
                expected = min(int(text_size * chunk.lines * 1.02 / max(end - begin, 1)) + 64, limits.max_lines)
                for column in (docnos, hashes, scores, ranks):
                    column.expect(expected)
            lines += chunk.lines
            if lines > limits.max_lines:
                return None
            if tag is None:
                tag = chunk.tag
            elif not bool((chunk.tag == tag).all()):
                return None
            if lines * 8 * max(chunk.docno.shape[1], docnos.width) > max(PADDED_MIN, PADDED_FACTOR * size):
                return None  # a few long docnos among many lines: the general path refuses it (field-too-long)
            heads.append(chunk.heads)
            runs.append(chunk.runs)
            docnos.add(chunk.docno)
            hashes.add(chunk.hashes)
            scores.add(chunk.score)
            ranks.add(chunk.rank)
    if not heads:
        return None
    topics, topic_of = intern_runs(_joined(heads), _joined(runs))
    words = docnos.values()
    docno = words.view(f"S{8 * words.shape[1]}").reshape(-1)
    docno.flags.writeable = False  # its hashes are kept (Run.derived) for the join with the qrels
    docno_hash = hashes.values()
    if has_duplicates(topic_of, docno_hash, pool):
        return None
    assert tag is not None
    label = decode(tag.view("S32"))
    run = Run(name, topics, topic_of, docno, scores.values(), ranks.values(), tuple(label), True)
    docno_hash.flags.writeable = False
    run.derived[DOCNO_HASHES] = docno_hash
    return run


@dataclass(frozen=True)
class _ChunkColumns:
    """One chunk's share of the run's columns, and its one tag (4 words, zero padded)."""

    lines: int
    heads: np.ndarray  # the topic (2 words) of each block of lines of one topic
    runs: np.ndarray  # the length of each such block
    docno: np.ndarray  # rows of words
    hashes: np.ndarray
    score: np.ndarray
    rank: np.ndarray
    tag: np.ndarray


def _chunk_columns(buf: np.ndarray, begin: int, end: int, limits: DecodeLimits) -> _ChunkColumns | None:
    """Parse one span of whole lines in the usual layout (``_parse_plain``); None when anything is unusual.
    Touches nothing but its span, so spans can be parsed on several threads."""
    ends = simple_rows(buf, begin, end, COLUMNS)
    if ends is None:
        return None
    # fields: 0 topic, 1 Q0 (unused), 2 docno, 3 rank, 4 score, 5 tag
    starts = {j: field_starts(ends, j, begin) for j in (0, 2, 3, 4, 5)}
    if int((ends[:, -1] - starts[0]).max()) > limits.max_line_bytes:
        return None
    lengths = {j: ends[:, j] - starts[j] for j in (0, 2, 5)}
    longest = {j: int(lengths[j].max()) for j in (0, 2, 5)}
    if longest[0] > 16 or longest[5] > 32 or longest[2] > _DOCNO_MAX:
        return None
    score, bad = parse_floats(buf, starts[4], ends[:, 4])
    if bad.any() or np.isnan(score).any():
        return None
    rank, bad = parse_ints(buf, starts[3], ends[:, 3])
    if bad.any():
        return None
    tags = gather_words(buf, starts[5], lengths[5], -(-longest[5] // 8))
    tag = np.zeros(4, dtype=np.uint64)
    tag[: tags.shape[1]] = tags[0]
    if not bool((tags == tag[: tags.shape[1]]).all()):
        return None
    heads, runs = label_runs(gather_words(buf, starts[0], lengths[0], 2))
    docno = gather_words(buf, starts[2], lengths[2], -(-longest[2] // 8))
    return _ChunkColumns(int(ends.shape[0]), heads, runs, docno, hash_words(docno), score, rank, tag)


class _Column:
    """One column of a run (1-D values, or rows of docno words) filled chunk by chunk into one array whose
    capacity doubles when full. Capacity never written costs no memory (the pages are never touched), so the
    column is held once, not once per chunk and again joined; narrower rows of words are zero padded."""

    def __init__(self) -> None:
        self._data: np.ndarray | None = None
        self._size = 0
        self._expected = 0  # rows the whole column is expected to hold (0: unknown)

    def expect(self, rows: int) -> None:
        """Size the first allocation for ``rows`` rows (an estimate: the column still grows past it)."""
        self._expected = rows

    @property
    def width(self) -> int:
        """Words per row so far (0 before the first chunk, or for 1-D values)."""
        return 0 if self._data is None or self._data.ndim == 1 else int(self._data.shape[1])

    def add(self, values: np.ndarray) -> None:
        """Append a chunk's values."""
        n, need = values.shape[0], self._size + values.shape[0]
        data = self._data
        if data is None or need > data.shape[0] or (values.ndim == 2 and values.shape[1] > data.shape[1]):
            if data is None:
                capacity = max(need, self._expected or 16 * n)
            else:
                capacity = max(need, 2 * data.shape[0]) if need > data.shape[0] else data.shape[0]
            shape = (capacity,) if values.ndim == 1 else (capacity, max(values.shape[1], self.width))
            grown = np.empty(shape, dtype=values.dtype)
            if data is not None:
                if values.ndim == 2:
                    grown[: self._size, data.shape[1] :] = 0
                    grown[: self._size, : data.shape[1]] = data[: self._size]
                else:
                    grown[: self._size] = data[: self._size]
            self._data = data = grown
        if values.ndim == 2:
            data[self._size : need, : values.shape[1]] = values
            data[self._size : need, values.shape[1] :] = 0
        else:
            data[self._size : need] = values
        self._size = need

    def values(self) -> np.ndarray:
        """The column (a view of its first rows)."""
        assert self._data is not None
        return self._data[: self._size]


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The chunks' pieces of one column as one array; the list is emptied, so the pieces can be freed."""
    whole = np.concatenate(parts)
    parts.clear()
    return whole


def _scores(rows: Rows, log: ProblemLog) -> np.ndarray:
    scores, bad = parse_floats(rows.buf, *rows.column(4))
    if bad.any():
        report_fields(log, rows, bad, 4, "score-not-numeric", "score {!r} is not a number")
    nan = np.isnan(scores) & ~bad
    if nan.any():
        report_fields(log, rows, nan, 4, "score-nan", "score {!r} is NaN; ranking would be undefined")
    return scores


def _tags(rows: Rows) -> list[str]:
    if len(rows) == 0:
        return []
    if rows.constant(5):
        return decode(rows.take(np.zeros(1, dtype=np.int64)).text(5))
    return decode(sorted_distinct(rows.text(5)))

"""Vectorised splitting of a text file into fields, with line and column positions kept for messages.

Works on the raw bytes with numpy (no Python loop per line): token boundaries are the transitions between
separator and non-separator bytes, and each token is assigned to its physical line by searching newline
offsets. Lines are ``\\n``-terminated; ``\\r`` counts as a separator, so CRLF files read the same.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evaluation.problems import ProblemLog, Severity

IntArray = npt.NDArray[np.int64]
ByteArray = npt.NDArray[np.uint8]

_NEWLINE = 10
_SPACE = 32
_TAB = 9
#: ``#``: a line whose first field starts with it is a comment, skipped by every reader
COMMENT = 35
_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)  # low k bytes
#: Columns are copied padded to their longest field, so one long field costs (lines x its length): a column may
#: take at most this many times the input's size (or ``PADDED_MIN``), else the input is refused (field-too-long).
PADDED_FACTOR = 8
PADDED_MIN = 64 << 20
_QUOTE = 120  # bytes of a field quoted in a message


@dataclass(frozen=True)
class Fields:
    """Every token of a text: byte offsets of starts and ends, and how many tokens each physical line has."""

    buf: ByteArray
    starts: IntArray
    ends: IntArray
    line_start: IntArray  # byte offset where each physical line begins
    counts: IntArray  # tokens on each physical line
    first: IntArray  # index (into starts) of each line's first token

    @property
    def n_lines(self) -> int:
        return int(self.counts.size)

    def content_lines(self) -> npt.NDArray[np.bool_]:
        """Per physical line, whether it is read: it has a field and is not a ``#`` comment."""
        content = self.counts > 0
        if content.any():
            first_tok = np.where(content, self.first, 0)
            content &= self.buf[self.starts[first_tok]] != COMMENT
        return content


@dataclass(frozen=True)
class Rows:
    """The lines that have the expected number of fields: token offsets (rows x columns) and line numbers."""

    buf: ByteArray
    starts: IntArray  # shape (n, ncols)
    ends: IntArray
    line: IntArray  # 1-based physical line numbers
    line_start: IntArray  # byte offset of each row's line

    def __len__(self) -> int:
        return int(self.line.size)

    def column(self, j: int) -> tuple[IntArray, IntArray]:
        return self.starts[:, j], self.ends[:, j]

    def text(self, j: int) -> np.ndarray:
        """Column ``j`` as a fixed-width bytes array (numpy ``S`` dtype)."""
        return gather_bytes(self.buf, self.starts[:, j], self.ends[:, j])

    def words(self, j: int) -> npt.NDArray[np.uint64]:
        """Column ``j`` as (n, k) little-endian uint64 words, zero padded (see ``gather_words``)."""
        starts, ends = self.starts[:, j], self.ends[:, j]
        lengths = ends - starts
        k = max(-(-int(lengths.max()) // 8), 1) if lengths.size else 1
        return gather_words(self.buf, starts, lengths, k)

    def constant(self, j: int) -> bool:
        """Whether field ``j`` holds the same bytes on every row."""
        starts, ends = self.starts[:, j], self.ends[:, j]
        if starts.size == 0:
            return True
        length = int(ends[0] - starts[0])
        if not bool((ends - starts == length).all()):
            return False
        words = self.words(j)
        return bool((words == words[0]).all())

    def strings(self, j: int) -> np.ndarray:
        """Column ``j`` as an ``S`` array padded to a multiple of 8 bytes (see ``gather_strings``)."""
        return gather_strings(self.buf, self.starts[:, j], self.ends[:, j])

    def columns(self, j: int) -> IntArray:
        """1-based character column where field ``j`` starts on each row (for messages)."""
        return self.starts[:, j] - self.line_start + 1

    def take(self, mask: npt.NDArray[np.bool_] | IntArray) -> Rows:
        return Rows(self.buf, self.starts[mask], self.ends[mask], self.line[mask], self.line_start[mask])


def tokenize(data: bytes, *, tabs_only: bool = False) -> Fields:
    """Locate all fields: separated by runs of whitespace (or only by tabs when ``tabs_only``)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    size = len(data)
    if size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Fields(buf, empty, empty, empty, empty, empty)
    text = buf[:size]
    if tabs_only:
        sep = (text == 9) | (text == _NEWLINE) | (text == 13)
    else:
        sep = text <= 32  # space, tab, CR, LF, VT, FF and other control bytes
    simple = _tokenize_single_gaps(buf, sep, size)
    if simple is not None:
        return simple
    # With a separator on both sides, transitions alternate: field start, field end, start, end ...
    padded = np.ones(size + 2, dtype=bool)
    padded[1:-1] = sep
    where = np.flatnonzero(padded[1:] != padded[:-1])
    starts = where[0::2]
    ends = where[1::2]
    newlines = np.flatnonzero(text == _NEWLINE)
    line_end = newlines if text[-1] == _NEWLINE else np.concatenate((newlines, [size]))
    line_start = np.concatenate(([0], line_end[:-1] + 1)).astype(np.int64)
    upto = np.searchsorted(starts, line_end)
    counts = np.diff(upto, prepend=0).astype(np.int64)
    return Fields(buf, starts.astype(np.int64), ends.astype(np.int64), line_start, counts, upto - counts)


def _tokenize_single_gaps(buf: ByteArray, sep: npt.NDArray[np.bool_], size: int) -> Fields | None:
    """The common layout, found with one scan: no leading separator and every gap a single byte.

    Then the separator positions are the field ends, the byte after each field says whether its line ends
    there, and there are no blank lines. Returns None for any other layout (the general path handles it).
    """
    if sep[0] or bool((sep[1:] & sep[:-1]).any()):
        return None
    gaps = np.flatnonzero(sep)
    if gaps.size == 0:
        return None
    if sep[size - 1]:
        ends = gaps
        starts = np.empty(gaps.size, dtype=np.int64)
        starts[1:] = gaps[:-1] + 1
    else:  # the last line has no terminator
        ends = np.empty(gaps.size + 1, dtype=np.int64)
        ends[:-1] = gaps
        ends[-1] = size
        starts = np.empty(gaps.size + 1, dtype=np.int64)
        starts[1:] = gaps + 1
    starts[0] = 0
    line_last = np.empty(ends.size, dtype=bool)
    line_last[:-1] = buf[ends[:-1]] == _NEWLINE
    line_last[-1] = True  # the end of the data ends the last line
    last = np.flatnonzero(line_last)
    counts = np.diff(last, prepend=-1)
    first = last - counts + 1
    return Fields(buf, starts, ends.astype(np.int64, copy=False), starts[first], counts, first)


def simple_rows(buf: ByteArray, begin: int, end: int, ncols: int) -> IntArray | None:
    """Where each field ends (rows x ncols offsets) in ``buf[begin:end]`` when it has the plain layout.

    Plain: whole lines (``end`` is just after a newline or is the end of the data) of exactly ``ncols``
    fields, no comment, every gap between fields a single space or tab -- what tools write. Then field
    ``j`` starts one byte after field ``j - 1`` ends (see ``field_starts``). One scan finds the separators;
    anything else (a NUL or other control byte as a gap included) returns None, for the general path
    (``tokenize``) to handle and report.
    """
    text = buf[begin:end]
    size = text.size
    if size == 0:
        return None
    sep = text <= 32
    if sep[0] or bool((sep[1:] & sep[:-1]).any()):
        return None
    gaps = np.flatnonzero(sep)
    gap_bytes = text[gaps]
    newlines = int(np.count_nonzero(gap_bytes == _NEWLINE))  # every newline is a separator
    blanks = int(np.count_nonzero(gap_bytes == _SPACE)) + int(np.count_nonzero(gap_bytes == _TAB))
    if blanks + newlines != gaps.size:
        return None
    if not sep[-1]:  # the data ends without a terminator: the end closes the last field
        gaps = np.append(gaps, size)
    if gaps.size % ncols:
        return None
    ends = gaps.reshape(-1, ncols)
    last = ends[:, -1]
    terminated = last if sep[-1] else last[:-1]
    # every line's last gap is a newline and there are no other newlines: exactly ncols fields per line
    if not bool((text[terminated] == _NEWLINE).all()):
        return None
    if newlines != terminated.size:
        return None
    if text[0] == COMMENT or bool((text[last[:-1] + 1] == COMMENT).any()):
        return None
    if begin:
        ends += begin
    return ends


def field_starts(ends: IntArray, j: int, begin: int) -> IntArray:
    """Offsets where field ``j`` starts, for rows from ``simple_rows`` (chunk starting at ``begin``)."""
    if j:
        return ends[:, j - 1] + 1
    starts = np.empty(ends.shape[0], dtype=np.int64)
    starts[0] = begin
    starts[1:] = ends[:-1, -1] + 1
    return starts


#: What a file whose lines ``bad`` (0-based) have the wrong field count looks like, said once for the whole file:
#: ``(message, line, column)``, or None to report the lines one by one (``diagnose.Layout`` is one).
Explain = Callable[[Fields, IntArray], "tuple[str, int, int] | None"]


def select_rows(fields: Fields, ncols: int, log: ProblemLog, what: str, *, extra_ok: bool = False,
                explain: Explain | None = None) -> Rows:
    """Keep lines with exactly ``ncols`` fields; blank lines and ``#`` comments are skipped, others are errors.

    With ``extra_ok``, longer lines are kept too (their first ``ncols`` fields) and one warning says how many
    there were -- trec_eval ignores anything after a run's tag, and its own fixtures rely on that. With
    ``explain`` (a layout of ``diagnose``), a file that looks comma-separated or of another layout gets one
    problem saying so instead of one per line.
    """
    counts = fields.counts
    if counts.size and fields.starts.size == ncols * counts.size and bool((counts == ncols).all()):
        # every line has the expected fields: the rows are a reshape unless some line is a comment
        starts = fields.starts.reshape(-1, ncols)
        if not bool((fields.buf[starts[:, 0]] == COMMENT).any()):
            lines = np.arange(1, counts.size + 1, dtype=np.int64)
            return _bounded(Rows(fields.buf, starts, fields.ends.reshape(-1, ncols), lines, fields.line_start),
                            log, what)
    content = fields.content_lines()
    good = content & (counts == ncols)
    if extra_ok:
        longer = np.flatnonzero(content & (counts > ncols))
        if longer.size:
            first = int(longer[0])
            log.add(
                "extra-fields",
                f"{longer.size} line(s) have more than {ncols} fields; the fields after the {ncols}th are ignored"
                " (as trec_eval does)",
                severity="warning",
                line=first + 1,
                column=int(fields.starts[fields.first[first] + ncols] - fields.line_start[first]) + 1,
            )
            good |= content & (counts > ncols)
    bad = np.flatnonzero(content & (counts != ncols) & ~good)
    if bad.size:
        _report_column_counts(fields, bad, ncols, log, what, explain)
    lines = np.flatnonzero(good)
    idx = fields.first[lines][:, None] + np.arange(ncols)
    return _bounded(Rows(fields.buf, fields.starts[idx], fields.ends[idx], lines + 1, fields.line_start[lines]),
                    log, what)


def _bounded(rows: Rows, log: ProblemLog, what: str) -> Rows:
    """``rows``, or none of them (and a ``field-too-long`` error) when a column padded to its longest field
    would take more than ``PADDED_FACTOR`` times the input: memory stays linear in the input's size."""
    n = len(rows)
    budget = max(PADDED_MIN, PADDED_FACTOR * int(rows.buf.size))
    for j in range(rows.starts.shape[1] if n else 0):
        lengths = rows.ends[:, j] - rows.starts[:, j]
        i = int(np.argmax(lengths))
        longest = int(lengths[i])
        if n * 8 * -(-longest // 8) > budget:
            log.add("field-too-long", f"field {j + 1} is {longest:,} bytes long: {what} columns are read padded to"
                    f" their longest field, and {n:,} lines of it would take over {PADDED_FACTOR} times the"
                    " file's size", line=int(rows.line[i]), column=int(rows.starts[i, j] - rows.line_start[i]) + 1)
            return rows.take(np.zeros(0, dtype=np.int64))
    return rows


def _report_column_counts(
    fields: Fields, bad: IntArray, ncols: int, log: ProblemLog, what: str, explain: Explain | None
) -> None:
    """One problem per run of consecutive lines with the same wrong count (capped), or one for the whole file
    when ``explain`` tells what it looks like."""
    found = explain(fields, bad) if explain is not None else None
    if found is not None:
        message, line, column = found
        log.add("wrong-column-count", message, line=line, column=column)
        return
    n = fields.counts[bad]
    heads = group_heads(bad, n)
    shown = heads[: log.room()]
    log.count_omitted(int(heads.size - shown.size))
    tails = np.append(heads[1:], bad.size) - 1
    for h, t in zip(shown.tolist(), tails[: shown.size].tolist()):
        i, count = int(bad[h]), int(n[h])
        if count > ncols:
            col = int(fields.starts[fields.first[i] + ncols] - fields.line_start[i]) + 1
        else:
            col = int(fields.ends[fields.first[i] + count - 1] - fields.line_start[i]) + 1
        log.add(
            "wrong-column-count",
            f"{what} lines have {ncols} fields; this one has {count}",
            line=i + 1,
            column=col,
            end_line=int(bad[t]) + 1,
        )


def group_heads(lines: IntArray, *keys: np.ndarray) -> IntArray:
    """Where each run of consecutive lines (``lines`` ascending) with equal ``keys`` begins: indices into
    ``lines``. Such a run is reported as one problem over a range of lines (``ProblemLog.add``)."""
    if lines.size < 2:
        return np.zeros(lines.size, dtype=np.int64)
    new = np.ones(lines.size, dtype=bool)
    same = np.diff(lines) == 1
    for key in keys:
        same &= (key[1:] == key[:-1]).reshape(same.size, -1).all(axis=1)
    new[1:] = ~same
    return np.flatnonzero(new)


def gather_bytes(buf: ByteArray, starts: IntArray, ends: IntArray) -> np.ndarray:
    """Copy byte ranges into a fixed-width ``S`` array (zero padded), eight bytes per gather."""
    n = starts.size
    lengths = ends - starts
    width = max(int(lengths.max()) if n else 1, 1)
    if n and int(lengths.min()) == width and int(starts.max()) <= buf.size - width:
        return span_view(buf, width)[starts].view(f"S{width}")  # equal lengths: one gather, nothing to pad
    words = -(-width // 8)
    out = gather_words(buf, starts, lengths, words)
    return out.view(np.uint8).reshape(n, words * 8)[:, :width].copy().view(f"S{width}").ravel()


def gather_strings(buf: ByteArray, starts: IntArray, ends: IntArray) -> np.ndarray:
    """Byte ranges as an ``S`` array whose width is the longest range rounded up to 8 bytes (zero padded).

    Values equal ``gather_bytes``'s; the array is a view of the gathered words, so nothing is copied and
    ``words_of`` gives the words back for free.
    """
    n = starts.size
    lengths = ends - starts
    words = max(-(-int(lengths.max()) // 8), 1) if n else 1
    return gather_words(buf, starts, lengths, words).view(f"S{8 * words}").reshape(n)


def words_of(values: np.ndarray) -> np.ndarray:
    """An ``S`` array as (n, words) little-endian uint64 words, zero padded (a view when the width allows)."""
    n = values.size
    width = values.dtype.itemsize
    words = max(-(-width // 8), 1)
    if width == 8 * words and values.flags.c_contiguous:
        return values.reshape(n).view(np.uint64).reshape(n, words)
    out = np.zeros((n, words * 8), dtype=np.uint8)
    out[:, :width] = values.reshape(n).view(np.uint8).reshape(n, width)
    return out.view(np.uint64)


def gather_matrix(buf: ByteArray, starts: IntArray, ends: IntArray, width: int) -> ByteArray:
    """Byte ranges as an (n, width) uint8 matrix, zero padded; ranges longer than ``width`` are cut."""
    words = -(-width // 8)
    out = gather_words(buf, starts, np.minimum(ends - starts, width), words)
    return out.view(np.uint8).reshape(starts.size, words * 8)[:, :width]


def gather_words(buf: ByteArray, starts: IntArray, lengths: IntArray, words: int) -> npt.NDArray[np.uint64]:
    """(n, words) little-endian uint64 words holding each range's bytes, bytes past its length zeroed.

    All words of a range come from one gather through an overlapping view of the buffer whose elements
    are the ``8 * words`` bytes starting at each offset; masking is skipped for words every range fills.
    """
    n = starts.size
    if n == 0:
        return np.zeros((0, words), dtype=np.uint64)
    width = 8 * words
    limit = buf.size - width  # last offset a whole element can start at
    if limit >= 0 and int(starts.max()) <= limit:
        out = span_view(buf, width)[starts].view(np.uint64).reshape(n, words)
    else:  # ranges near the end of the buffer: read them from a zero-padded copy of its tail
        near = starts > limit
        origin = int(starts[near].min())
        tail = np.zeros(buf.size - origin + width, dtype=np.uint8)
        tail[: buf.size - origin] = buf[origin:]
        out = np.empty((n, words), dtype=np.uint64)
        out[near] = span_view(tail, width)[starts[near] - origin].view(np.uint64).reshape(-1, words)
        if limit >= 0 and not near.all():
            far = ~near
            out[far] = span_view(buf, width)[starts[far]].view(np.uint64).reshape(-1, words)
    shortest, longest = int(lengths.min()), int(lengths.max())
    for w in range(words):
        if shortest >= 8 * (w + 1):
            continue  # every range fills this word
        if shortest == longest:
            out[:, w] &= _MASKS[min(max(shortest - 8 * w, 0), 8)]
        else:
            out[:, w] &= _MASKS[np.clip(lengths - 8 * w, 0, 8)]
    return out


def span_view(buf: ByteArray, width: int) -> np.ndarray:
    """The ``width`` bytes starting at every offset of ``buf`` as one void element each (overlapping view).

    Void elements need no alignment, so a gather through this view copies whole spans at once.
    """
    return np.ndarray((buf.size - width + 1,), dtype=f"V{width}", buffer=buf, strides=(1,))


def decode(values: np.ndarray) -> list[str]:
    """Decode an ``S`` array to Python strings (UTF-8, undecodable bytes replaced)."""
    return [v.decode("utf-8", "replace") for v in values.tolist()]


def report_fields(
    log: ProblemLog,
    rows: Rows,
    mask: np.ndarray,
    col: int,
    code: str,
    template: str,
    severity: Severity = "error",
) -> None:
    """Report a problem on field ``col`` of every masked row (capped), quoting the field (its first
    ``_QUOTE`` bytes); the same field on consecutive lines is one problem over their range."""
    where = np.flatnonzero(mask)
    sev = severity
    starts, ends = rows.starts[where, col], rows.ends[where, col]
    quoted = np.minimum(ends, starts + _QUOTE)
    lengths = quoted - starts
    words = -(-int(lengths.max()) // 8) if where.size else 1
    heads = group_heads(rows.line[where], gather_words(rows.buf, starts, lengths, max(words, 1)), ends - starts)
    shown = heads[: log.room(sev)]
    log.count_omitted(int(heads.size - shown.size), sev)
    last = (np.append(heads[1:], where.size) - 1)[: shown.size]
    picked = where[shown]
    texts = decode(gather_bytes(rows.buf, starts[shown], quoted[shown])) if shown.size else []
    texts = [t + "..." if e - b > _QUOTE else t for t, b, e in zip(texts, starts[shown].tolist(), ends[shown].tolist())]
    cols = rows.columns(col)[picked]
    ranges = zip(picked.tolist(), where[last].tolist(), texts, cols.tolist())
    for i, j, text, c in ranges:
        log.add(code, template.format(text), severity=sev, line=int(rows.line[i]), column=int(c),
                end_line=int(rows.line[j]))

"""Vectorised splitting of a text file into fields, with line and column positions kept for messages.

Works on the raw bytes with numpy (no Python loop per line): token boundaries are the transitions between
separator and non-separator bytes, and each token is assigned to its physical line by searching newline
offsets. Lines are ``\\n``-terminated; ``\\r`` counts as a separator, so CRLF files read the same.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evaluation.problems import ProblemLog, Severity

IntArray = npt.NDArray[np.int64]
ByteArray = npt.NDArray[np.uint8]

_NEWLINE = 10
_HASH = 35
_PAD = 16
_ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


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

    def columns(self, j: int) -> IntArray:
        """1-based character column where field ``j`` starts on each row (for messages)."""
        return self.starts[:, j] - self.line_start + 1

    def take(self, mask: npt.NDArray[np.bool_] | IntArray) -> Rows:
        return Rows(self.buf, self.starts[mask], self.ends[mask], self.line[mask], self.line_start[mask])


def tokenize(data: bytes, *, tabs_only: bool = False) -> Fields:
    """Locate all fields: separated by runs of whitespace (or only by tabs when ``tabs_only``)."""
    # Zero padding lets gathers read whole 8-byte words past the last field without bounds checks.
    buf = np.frombuffer(data + bytes(_PAD), dtype=np.uint8)
    size = len(data)
    if size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return Fields(buf, empty, empty, empty, empty, empty)
    text = buf[:size]
    if tabs_only:
        sep = (text == 9) | (text == _NEWLINE) | (text == 13)
    else:
        sep = text <= 32  # space, tab, CR, LF, VT, FF and other control bytes
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


def select_rows(fields: Fields, ncols: int, log: ProblemLog, what: str) -> Rows:
    """Keep lines with exactly ``ncols`` fields; blank lines and ``#`` comments are skipped, others are errors."""
    counts = fields.counts
    content = counts > 0
    if content.any():
        first_tok = np.where(content, fields.first, 0)
        comment = content & (fields.buf[fields.starts[first_tok]] == _HASH) if fields.starts.size else content
        content &= ~comment
    good = content & (counts == ncols)
    bad = np.flatnonzero(content & (counts != ncols))
    if bad.size:
        _report_column_counts(fields, bad, ncols, log, what)
    lines = np.flatnonzero(good)
    idx = fields.first[lines][:, None] + np.arange(ncols)
    return Rows(fields.buf, fields.starts[idx], fields.ends[idx], lines + 1, fields.line_start[lines])


def _report_column_counts(fields: Fields, bad: IntArray, ncols: int, log: ProblemLog, what: str) -> None:
    shown = bad[: log.room()]
    log.count_omitted(int(bad.size - shown.size))
    for i in shown.tolist():
        n = int(fields.counts[i])
        if n > ncols:
            col = int(fields.starts[fields.first[i] + ncols] - fields.line_start[i]) + 1
        else:
            col = int(fields.ends[fields.first[i] + n - 1] - fields.line_start[i]) + 1
        log.add(
            "wrong-column-count",
            f"{what} lines have {ncols} fields; this one has {n}",
            line=i + 1,
            column=col,
        )


def gather_bytes(buf: ByteArray, starts: IntArray, ends: IntArray) -> np.ndarray:
    """Copy byte ranges into a fixed-width ``S`` array (zero padded), eight bytes per gather."""
    n = starts.size
    lengths = ends - starts
    width = max(int(lengths.max()) if n else 1, 1)
    words = -(-width // 8)
    out = _gather_words(buf, starts, lengths, words)
    return out.view(np.uint8).reshape(n, words * 8)[:, :width].copy().view(f"S{width}").ravel()


def gather_matrix(buf: ByteArray, starts: IntArray, ends: IntArray, width: int) -> ByteArray:
    """Byte ranges as an (n, width) uint8 matrix, zero padded; ranges longer than ``width`` are cut."""
    words = -(-width // 8)
    out = _gather_words(buf, starts, np.minimum(ends - starts, width), words)
    return out.view(np.uint8).reshape(starts.size, words * 8)[:, :width]


def _gather_words(buf: ByteArray, starts: IntArray, lengths: IntArray, words: int) -> np.ndarray:
    """(n, words) little-endian uint64 words holding each range's bytes, bytes past its length zeroed."""
    n = starts.size
    out = np.zeros((n, words), dtype=np.uint64)
    if n == 0:
        return out
    limit = buf.size - 8
    window = np.lib.stride_tricks.sliding_window_view(buf, 8)
    for w in range(words):
        at = np.minimum(starts + 8 * w, limit)
        chunk = np.ascontiguousarray(window[at]).view("<u8").ravel()
        keep = np.clip(lengths - 8 * w, 0, 8).astype(np.uint64)
        mask = np.where(keep >= 8, _ALL_ONES, (np.uint64(1) << (keep * np.uint64(8))) - np.uint64(1))
        out[:, w] = chunk & mask
    return out


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
    """Report a problem on field ``col`` of every masked row (capped), quoting the field."""
    where = np.flatnonzero(mask)
    sev = severity
    shown = where[: log.room(sev)]
    log.count_omitted(int(where.size - shown.size), sev)
    texts = decode(rows.take(shown).text(col)) if shown.size else []
    cols = rows.columns(col)[shown]
    for i, text, c in zip(shown.tolist(), texts, cols.tolist()):
        log.add(code, template.format(text), severity=sev, line=int(rows.line[i]), column=int(c))

"""Vectorised, exact parsing of decimal numbers in byte fields.

Floats: plain decimals (``-12.3456``) whose digits form an integer below 2**53 with at most 22 fraction digits
are converted as ``mantissa / 10**digits`` -- one correctly rounded IEEE division of two exact doubles, so the
result equals C ``strtod`` bit for bit (Clinger's fast path). Anything else (exponents, 17-digit reprs, ``inf``)
goes through Python's ``float`` for those fields only. Parsing never loops in Python over ordinary fields.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from evaluation.formats.lexer import ByteArray, IntArray

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

_MINUS, _PLUS, _DOT, _ZERO = 45, 43, 46, 48
_FAST_WIDTH = 24  # longest field handled by the vectorised path
_EXACT_MANTISSA = 1 << 53
_POW10 = np.array([10.0**i for i in range(23)], dtype=np.float64)  # all exactly representable


def _digit_scan(
    buf: ByteArray, starts: IntArray, ends: IntArray, allow_dot: bool
) -> tuple[npt.NDArray[np.int64], IntArray, BoolArray, BoolArray]:
    """Mantissa, fraction-digit count, negative flag and 'fast path applies' for each field.

    Walks the fields column by column (a contiguous vector per character position), so the work is
    about a dozen vector operations per character of the longest field.
    """
    lengths = ends - starts
    n = starts.size
    width = int(min(max(int(lengths.max()) if n else 1, 1), _FAST_WIDTH))
    limit = buf.size - 1
    first = buf[np.minimum(starts, limit)]
    neg = first == _MINUS
    signed = neg | (first == _PLUS)
    mant = np.zeros(n, dtype=np.int64)
    frac = np.zeros(n, dtype=np.int64)
    ndigits = np.zeros(n, dtype=np.int64)
    seen_dot = np.zeros(n, dtype=bool)
    bad = lengths > _FAST_WIDTH
    for j in range(width):
        c = buf[np.minimum(starts + j, limit)]
        body = lengths > j
        if j == 0:
            body &= ~signed
        d = c - np.uint8(_ZERO)  # non-digits wrap above 9
        is_digit = (d <= 9) & body
        is_dot = (c == _DOT) & body if allow_dot else np.zeros(n, dtype=bool)
        bad |= body & ~is_digit & ~is_dot
        bad |= is_dot & seen_dot
        mant = np.where(is_digit, mant * 10 + d, mant)
        frac += is_digit & seen_dot
        ndigits += is_digit
        seen_dot |= is_dot
    fast = ~bad & (ndigits >= 1) & (ndigits <= 18)
    fast &= mant < _EXACT_MANTISSA
    return mant, frac, neg, fast


def parse_floats(buf: ByteArray, starts: IntArray, ends: IntArray) -> tuple[FloatArray, BoolArray]:
    """Parse fields as doubles exactly as C strtod would; returns values and a mask of non-numeric fields."""
    mant, frac, neg, fast = _digit_scan(buf, starts, ends, allow_dot=True)
    fast &= frac <= 22
    values = mant.astype(np.float64) / _POW10[np.minimum(frac, 22)]
    values = np.where(neg, -values, values)
    bad = np.zeros(starts.size, dtype=bool)
    slow = np.flatnonzero(~fast)
    if slow.size:
        raw = buf.tobytes()
        for i in slow.tolist():
            text = raw[starts[i] : ends[i]]
            try:
                if b"_" in text:
                    raise ValueError
                values[i] = float(text)
            except ValueError:
                bad[i] = True
                values[i] = np.nan
    return values, bad


def parse_ints(buf: ByteArray, starts: IntArray, ends: IntArray) -> tuple[IntArray, BoolArray]:
    """Parse fields as (signed, decimal) integers; returns values and a mask of fields that are not integers."""
    mant, _frac, neg, fast = _digit_scan(buf, starts, ends, allow_dot=False)
    values = np.where(neg, -mant, mant)
    bad = np.zeros(starts.size, dtype=bool)
    slow = np.flatnonzero(~fast)
    if slow.size:
        raw = buf.tobytes()
        for i in slow.tolist():
            text = raw[starts[i] : ends[i]]
            try:
                if b"_" in text:
                    raise ValueError
                value = int(text)
                if abs(value) >= 1 << 62:
                    raise ValueError
                values[i] = value
            except ValueError:
                bad[i] = True
                values[i] = 0
    return values, bad

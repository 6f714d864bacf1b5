"""Vectorised, exact parsing of decimal numbers in byte fields.

Floats: plain decimals (``-12.3456``) whose digits form an integer below 2**53 with at most 22 fraction digits
are converted as ``mantissa / 10**digits`` -- one correctly rounded IEEE division of two exact doubles, so the
result equals C ``strtod`` bit for bit (Clinger's fast path). Anything else (exponents, 17-digit reprs, ``inf``,
C99 hexadecimal floats such as ``0x10`` or ``-0x1.8p3``) goes through ``strtod_field`` for those fields only, which
accepts exactly the complete fields C ``strtod`` accepts. Parsing never loops in Python over ordinary fields.
"""

from __future__ import annotations

import math
import re

import numpy as np
import numpy.typing as npt

from evaluation.formats.lexer import ByteArray, IntArray, gather_matrix, span_view

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

    Gathers the fields' bytes once as a zero-padded matrix (fields never hold a zero byte), then walks it
    column by column (a contiguous vector per character position) with small in-place updates: about a
    dozen cheap vector operations per character of the longest field.
    """
    lengths = ends - starts
    n = starts.size
    width = int(min(max(int(lengths.max()) if n else 1, 1), _FAST_WIDTH))
    columns = np.ascontiguousarray(gather_matrix(buf, starts, np.minimum(ends, starts + width), width).T)
    first = columns[0]
    neg = first == _MINUS
    signed = neg | (first == _PLUS)
    mant = np.zeros(n, dtype=np.int64)
    step = np.empty(n, dtype=np.int64)
    ndigits = np.zeros(n, dtype=np.uint8)
    frac = np.zeros(n, dtype=np.uint8)
    seen_dot = np.zeros(n, dtype=bool)
    bad = lengths > _FAST_WIDTH
    for j in range(width):
        c = columns[j]
        d = c - np.uint8(_ZERO)  # non-digits (and the zero padding) wrap above 9
        is_digit = d <= 9
        other = ~is_digit & (c != 0)
        if allow_dot:
            is_dot = c == _DOT
            other &= ~is_dot
            bad |= is_dot & seen_dot
        if j == 0:
            other &= ~signed
        bad |= other
        np.multiply(mant, 10, out=step)
        step += d
        np.copyto(mant, step, where=is_digit)
        ndigits += is_digit
        if allow_dot:
            frac += is_digit & seen_dot
            seen_dot |= is_dot
    fast = ~bad & (ndigits >= 1) & (ndigits <= 18)
    fast &= mant < _EXACT_MANTISSA
    return mant, frac.astype(np.int64), neg, fast


def parse_floats(buf: ByteArray, starts: IntArray, ends: IntArray) -> tuple[FloatArray, BoolArray]:
    """Parse fields as doubles exactly as C strtod would; returns values and a mask of non-numeric fields."""
    if starts.size == 0:
        return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=bool)
    mant, frac, neg, fast = _digit_scan(buf, starts, ends, allow_dot=True)
    fast &= frac <= 22
    values = mant.astype(np.float64) / _POW10[np.minimum(frac, 22)]
    values = np.where(neg, -values, values)
    bad = np.zeros(starts.size, dtype=bool)
    slow = np.flatnonzero(~fast) if not fast.all() else np.zeros(0, dtype=np.int64)
    if slow.size:
        raw = buf.tobytes()
        for i in slow.tolist():
            text = raw[starts[i] : ends[i]]
            value = strtod_field(text)
            bad[i] = value is None
            values[i] = np.nan if value is None else value
    return values, bad


_HEX_FLOAT = re.compile(rb"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?")
_DECIMAL_FLOAT = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_WORD_FLOAT = re.compile(rb"[+-]?(?:inf|infinity|nan)", re.IGNORECASE)


def strtod_field(text: bytes) -> float | None:
    """The value C ``strtod`` reads from a whole field -- decimal, ``inf``/``infinity``/``nan`` in any case, or a
    C99 hexadecimal float (``0x10``, ``0x1.8p3``; overflow gives +-inf as strtod does) -- or None when strtod
    would stop before the field's end (formats.md: scores are read as C strtod reads them)."""
    if _HEX_FLOAT.fullmatch(text):
        sign = -1.0 if text[:1] == b"-" else 1.0
        body = text.lstrip(b"+-").decode()
        try:
            return sign * float.fromhex(body)
        except OverflowError:
            return sign * math.inf
    if _DECIMAL_FLOAT.fullmatch(text) or _WORD_FLOAT.fullmatch(text):
        return float(text)
    return None


def parse_ints(buf: ByteArray, starts: IntArray, ends: IntArray) -> tuple[IntArray, BoolArray]:
    """Parse fields as (signed, decimal) integers; returns values and a mask of fields that are not integers."""
    if starts.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    values, fast = _short_ints(buf, starts, ends)
    rest = np.flatnonzero(~fast) if not fast.all() else np.zeros(0, dtype=np.int64)
    if rest.size:
        mant, _frac, neg, ok = _digit_scan(buf, starts[rest], ends[rest], allow_dot=False)
        values[rest] = np.where(neg, -mant, mant)
        fast[rest] = ok
    bad = np.zeros(starts.size, dtype=bool)
    slow = np.flatnonzero(~fast) if not fast.all() else np.zeros(0, dtype=np.int64)
    if slow.size:
        raw = buf.tobytes()
        for i in slow.tolist():
            text = raw[starts[i] : ends[i]]
            try:
                if b"_" in text:
                    raise ValueError  # internal: control flow, caught below (the field is marked bad)
                value = int(text)
                if abs(value) >= 1 << 62:
                    raise ValueError  # internal: control flow, caught below (the field is marked bad)
                values[i] = value
            except ValueError:
                bad[i] = True
                values[i] = 0
    return values, bad


_U32 = np.uint32
_LOW_BYTES32 = np.array([(1 << (8 * k)) - 1 for k in range(5)], dtype=np.uint32)
_ALIGN32 = np.array([8 * (4 - k) for k in range(5)], dtype=np.uint32)
_ZERO_PAD32 = np.array([0x30303030 >> (8 * k) if k < 4 else 0 for k in range(5)], dtype=np.uint32)


def _short_ints(buf: ByteArray, starts: IntArray, ends: IntArray) -> tuple[IntArray, BoolArray]:
    """Values of ``[sign] digits`` fields of at most 4 bytes (ranks, grades), each read as one 32-bit word.

    The sign becomes a '0' digit, the digits are right-aligned behind '0' padding, checked, and summed with
    two multiply-add steps; other fields are returned as not ``fast`` (for ``_digit_scan``).
    """
    n = starts.size
    length = ends - starts
    ok = (length <= 4) & (starts <= buf.size - 4)
    if buf.size < 4 or not ok.any():
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=bool)
    kept = np.where(ok, length, 0)
    word = span_view(buf, 4)[np.where(ok, starts, 0)].view(np.uint32)
    word &= _LOW_BYTES32[kept]
    first = word & _U32(0xFF)
    neg = first == _U32(_MINUS)
    signed = neg | (first == _U32(_PLUS))
    word ^= signed.astype(np.uint32) * (first ^ _U32(_ZERO))  # the sign byte becomes '0'
    word <<= _ALIGN32[kept]
    word |= _ZERO_PAD32[kept]
    ok &= (word & _U32(0xF0F0F0F0)) == _U32(0x30303030)
    ok &= ((word + _U32(0x06060606)) & _U32(0xF0F0F0F0)) == _U32(0x30303030)  # no carry out of a digit
    ok &= length > signed
    word &= _U32(0x0F0F0F0F)
    word = (word * _U32(10) + (word >> _U32(8))) & _U32(0x00FF00FF)
    word = (word * _U32(100) + (word >> _U32(16))) & _U32(0xFFFF)
    values = word.astype(np.int64)
    np.negative(values, out=values, where=neg)
    return values, ok

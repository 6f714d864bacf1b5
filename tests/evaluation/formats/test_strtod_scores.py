"""Scores are read as C ``strtod`` reads them (docs/formats.md): every complete field strtod accepts -- hexadecimal
floats (``0x10``, ``-0x1.8p3``), ``inf``/``infinity``, exponents, ``-0`` -- and nothing else. The C library's own
``strtod`` (through ctypes) is the oracle."""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.formats import read_run
from evaluation.formats.numbers import strtod_field
from evaluation.formats.source import Blob
from evaluation.problems import InputError

_LIBC = ctypes.CDLL(ctypes.util.find_library("c"))
_LIBC.strtod.restype = ctypes.c_double
_LIBC.strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]


def c_strtod(text: bytes) -> float | None:
    """What C strtod reads from the whole of ``text``, or None when it stops before the end."""
    buffer = ctypes.create_string_buffer(text)
    end = ctypes.c_char_p()
    value = _LIBC.strtod(buffer, ctypes.byref(end))
    consumed = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buffer)  # type: ignore[operator]
    return value if text and consumed == len(text) else None


def same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


@pytest.mark.parametrize("text", [b"0x10", b"0X1A", b"-0x1.8p3", b"0x.8", b"0x1p-1074", b"0x1p99999", b"+0x0p0",
                                  b"1e5", b"-0", b"1E-5", b"inf", b"-Infinity", b"NaN", b"5.", b".5", b"0x",
                                  b"0x1p", b"1e", b".", b"1.5.2", b"1_000", b"0xg", b"infin", b"--1", b"1,5",
                                  b"0x1.fffffffffffff8p1023"])
def test_fields_read_as_strtod_reads_them(text: bytes) -> None:
    assert same(strtod_field(text), c_strtod(text)), text


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(st.text(alphabet="0123456789abcdefxXpPeE.+-inINFtyA", min_size=1, max_size=12))
def test_generated_fields_read_as_strtod_reads_them(text: str) -> None:
    field = text.encode()
    assert same(strtod_field(field), c_strtod(field)), field


def test_a_run_with_hex_scores_ranks_by_their_values() -> None:
    run = read_run(Blob.from_bytes(b"1 Q0 a 1 0x10 t\n1 Q0 b 2 15.5 t\n1 Q0 c 3 -0x1p-1 t\n1 Q0 d 4 0x1.8p4 t\n",
                                   name="r"))
    assert run.score.tolist() == [16.0, 15.5, -0.5, 24.0]


def test_what_strtod_refuses_is_still_refused() -> None:
    with pytest.raises(InputError) as refused:
        read_run(Blob.from_bytes(b"1 Q0 a 1 0x t\n1 Q0 b 2 nan t\n", name="r"))
    assert [p.code for p in refused.value.problems] == ["score-not-numeric", "score-nan"]

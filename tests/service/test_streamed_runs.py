"""Large runs parsed from a temporary file (``service.inputs.streamed_runs``): the same ``Run`` as from bytes, for
plain text and multi-member gzip; anything the ``Blob`` path would report (a limit, a NUL byte, a corrupt or
truncated stream, a byte-order mark, a warning) is left to it (None)."""

from __future__ import annotations

import gzip
import random

import numpy as np
import pytest

from evalserve.service.inputs.streamed_runs import parse_streamed
from evaluation.formats import Blob, parse_run
from evaluation.formats.source import DecodeLimits

LIMITS = DecodeLimits()


@pytest.fixture(scope="module")
def text() -> bytes:
    rng = random.Random(7)
    return "".join(f"{q} Q0 {doc} {r} {rng.random() * 30:.6f} bm25\n" for q in range(1, 301)
                   for r, doc in enumerate(rng.sample(range(8_800_000), 200), start=1)).encode()


@pytest.mark.parametrize("layout", ["plain", "gzip", "two gzip members"])
def test_the_same_run_as_from_bytes(text: bytes, layout: str) -> None:
    half = text.index(b"\n", len(text) // 2) + 1
    data = {"plain": text, "gzip": gzip.compress(text),
            "two gzip members": gzip.compress(text[:half]) + gzip.compress(text[half:])}[layout]
    streamed = parse_streamed(data, "a.run.gz", LIMITS)
    expected = parse_run(Blob.from_bytes(data, "a.run.gz")).value
    assert streamed is not None and expected is not None
    header = (streamed.name, streamed.topics, streamed.tags, streamed.ranks_valid)
    assert header == (expected.name, expected.topics, expected.tags, expected.ranks_valid)
    assert header[0] == "a.run" and header[2] == ("bm25",) and len(streamed) == 60_000
    for column in ("topic", "docno", "score", "rank"):
        assert np.array_equal(getattr(streamed, column), getattr(expected, column)), column


def test_what_the_blob_path_reports_is_left_to_it(text: bytes) -> None:
    packed = gzip.compress(text)
    assert parse_streamed(packed[:-20], "a", LIMITS) is None, "truncated"
    assert parse_streamed(packed + b"\0\0\0\0", "a", LIMITS) is None, "trailing garbage"
    assert parse_streamed(text, "a", DecodeLimits(max_lines=1000)) is None
    assert parse_streamed(gzip.compress(text), "a", DecodeLimits(max_bytes=len(text) - 1)) is None
    assert parse_streamed(text, "a", DecodeLimits(max_line_bytes=10)) is None
    assert parse_streamed(text.replace(b" Q0 ", b" Q\0 ", 1), "a", LIMITS) is None, "binary"
    assert parse_streamed(b"\xef\xbb\xbf" + text, "a", LIMITS) is None, "byte-order mark"
    assert parse_streamed(text.replace(b" 1 ", b" one ", 1), "a", LIMITS) is None, "a warning"
    assert parse_streamed(b"", "a", LIMITS) is None

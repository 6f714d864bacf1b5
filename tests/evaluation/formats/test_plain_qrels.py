"""The qrels fast path (``plain_qrels``) gives exactly what the general reader gives, or steps aside.

Every comparison reads the same bytes twice: once as ``parse_qrels`` does (fast path first), once with the fast
path switched off; values (dtypes included) and problems must be equal.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.formats import plain_qrels, qrels
from evaluation.formats.source import Blob
from evaluation.model import Qrels
from evaluation.problems import Parsed
from tests.conftest import shared_data_dir

TREC_QRELS = [
    "trec-web-2009-2014/2009/qrels.diversity",
    "trec-web-2009-2014/2010/10.adhoc-qrels.final.txt",
    "trec-web-2009-2014/2010/10.diversity-qrels.final.txt",
    "trec-web-2009-2014/2011/qrels.adhoc.txt",
    "trec-web-2009-2014/2011/qrels.diversity.txt",
    "trec-web-2009-2014/2011/qrels-for-ndeval.txt",
    "trec-web-2009-2014/2012/qrels.adhoc.txt",
    "trec-web-2009-2014/2012/qrels.diversity.txt",
    "trec-web-2009-2014/2012/qrels-for-ndeval.txt",
    "trec-web-2009-2014/2013/qrels.adhoc.txt",
    "trec-web-2009-2014/2013/qrels.all.txt",
    "trec-web-2009-2014/2013/qrels.ndeval.txt",
    "trec-web-2009-2014/2014/qrels.adhoc.txt",
    "trec-web-2009-2014/2014/qrels.all.txt",
    "trec-web-2009-2014/2014/qrels.ndeval.txt",
    "trec_eval-test/qrels.test",
    "trec_eval-test/qrels.123",
    "trec_eval-test/qrels-302.test",
    "trec_eval-test/qrels.rel_level",
    "ntcir-www/wwwE.qrels",
]


GENERAL = {
    "trec-web-2009-2014/2012/qrels.adhoc.txt",
    "trec-web-2009-2014/2014/qrels.adhoc.txt",
    "trec-web-2009-2014/2014/qrels.all.txt",
    "trec-web-2009-2014/2014/qrels.ndeval.txt",
    "ntcir-www/wwwE.qrels",
}


def _both(data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[Parsed[Qrels], Parsed[Qrels], bool]:
    """(fast path on, fast path off, whether the fast path took the file)."""
    blob = Blob("q.txt", data, data)
    taken = plain_qrels.read_plain_qrels(data, blob.name) is not None
    fast = qrels.parse_qrels(blob)
    with monkeypatch.context() as m:
        m.setattr(qrels, "read_plain_qrels", lambda data, name: None)
        general = qrels.parse_qrels(blob)
    return fast, general, taken


def _assert_same(a: Parsed[Qrels], b: Parsed[Qrels]) -> None:
    assert a.problems == b.problems
    assert (a.omitted_errors, a.omitted_warnings) == (b.omitted_errors, b.omitted_warnings)
    if b.value is None:
        assert a.value is None
        return
    assert a.value is not None
    x, y = a.value, b.value
    assert (x.topics, x.intents, x.name) == (y.topics, y.intents, y.name)
    assert x.docnos.dtype == y.docnos.dtype
    assert x.docnos.tolist() == y.docnos.tolist()
    for column in ("topic", "intent", "doc", "grade"):
        u, v = getattr(x, column), getattr(y, column)
        assert u.dtype == v.dtype, column
        assert np.array_equal(u, v), column


@pytest.mark.parametrize("relative", TREC_QRELS)
def test_real_qrels_read_the_same(relative: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = shared_data_dir() / relative
    if not path.exists():
        pytest.skip(f"shared data not found: {path}")
    fast, general, taken = _both(path.read_bytes(), monkeypatch)
    _assert_same(fast, general)
    # most are in the usual layout; 2012's ad hoc and 2014's files have wider gaps or repeats, the NTCIR file
    # three fields per line: the general path reads those
    assert taken == (relative not in GENERAL), relative


def test_the_wide_benchmark_layout_reads_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many topics, unsorted docnos, several spans (``_CHUNK`` made small)."""
    rng = np.random.default_rng(5)
    lines = [f"{100000 + t} 0 clueweb09-en{rng.integers(10**4):04d}-{rng.integers(100):02d}-{rng.integers(10**5):05d}"
             f" {rng.integers(-2, 5)}" for t in range(300) for _ in range(rng.integers(1, 30))]
    monkeypatch.setattr(plain_qrels, "_CHUNK", 997)
    fast, general, taken = _both(("\n".join(lines) + "\n").encode(), monkeypatch)
    assert taken
    _assert_same(fast, general)


LABEL = st.text(alphabet="0123456789abcXYZ-_.", min_size=1, max_size=18)
DOCNO = st.one_of(st.text(alphabet="abcdef0123-", min_size=1, max_size=12),
                  st.text(alphabet="xyz", min_size=20, max_size=40))
GRADE = st.one_of(st.integers(-3, 4), st.integers(-10**6, 10**7)).map(str) | st.sampled_from(["1.5", "L2", "x"])
LINE = st.tuples(LABEL, st.sampled_from(["0", "1", "2", "10"]), DOCNO, GRADE)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(LINE, min_size=0, max_size=40),
    seps=st.sampled_from([" ", "\t", "  ", " \t"]),
    ending=st.sampled_from(["\n", "", "\r\n"]),
    extra=st.sampled_from(["", "# comment\n", "\n", "1 0 d\n", "1 0 d 1 x\n", "1\x000 d 1\n"]),
    chunk=st.sampled_from([1, 50, 1 << 20]),
)
def test_any_file_reads_the_same(lines: list[tuple[str, str, str, str]], seps: str, ending: str, extra: str,
                                 chunk: int) -> None:
    text = "".join(seps.join(line) + "\n" for line in lines)
    if ending != "\n" and text:
        text = text[:-1] + ending
    position = len(text) // 2
    cut = text.find("\n", position)
    text = text[: cut + 1] + extra + text[cut + 1 :] if cut >= 0 else text + extra
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(plain_qrels, "_CHUNK", chunk)
        fast, general, _ = _both(text.encode(), monkeypatch)
    _assert_same(fast, general)


def test_repeats_and_unusual_lines_take_the_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    for text in ("1 0 d1 1\n1 0 d1 1\n", "1 0 d1 1\n1 0 d1 2\n", "1 0 d1 1\r\n", "# c\n1 0 d1 1\n", "1 d1 L2\n",
                 "1 0 d1 1 extra\n", "1 0 " + "d" * 300 + " 1\n", ""):
        fast, general, taken = _both(text.encode(), monkeypatch)
        assert not taken, text
        _assert_same(fast, general)


def test_sorted_docnos_need_no_reordering(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join(f"{t} 0 doc-{d:03d} {d % 3}\n" for t in range(5) for d in range(50))
    fast, general, taken = _both(text.encode(), monkeypatch)
    assert taken
    _assert_same(fast, general)


def test_longest_docno_width() -> None:
    words = np.zeros((2, 2), dtype=np.uint64)
    words[0] = np.frombuffer(b"abcdefghij\0\0\0\0\0\0", dtype=np.uint64)
    words[1] = np.frombuffer(b"ab\0\0\0\0\0\0\0\0\0\0\0\0\0\0", dtype=np.uint64)
    assert plain_qrels._longest(words) == 10


def test_shared_data_location_is_a_path() -> None:
    assert isinstance(shared_data_dir(), Path)

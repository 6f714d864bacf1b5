"""Runs read straight from a file (``parse_run_file``): plain and gzip files stream block by block and give the
run, the name and the SHA-256 that reading the whole file gives; files with problems, and files past a decode
limit, fall back to the general reader and report the same problems. Also the integer kernels the fast path
relies on (duplicate check, interning, score order) against the sort-based results they replace."""

from __future__ import annotations

import gzip
import hashlib
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.formats import Blob, load, parse_run
from evaluation.formats.keys import GROUP_MULT, has_duplicates, intern_runs
from evaluation.formats.lexer import words_of
from evaluation.formats.source import DecodeLimits
from evaluation.formats.trec_run import RunFile, parse_run_file
from evaluation.model import Run
from evaluation.problems import InputError
from evaluation.ranking import _by_score


def _lines(n_topics: int, depth: int, seed: int = 7) -> bytes:
    rng = np.random.default_rng(seed)
    rows = [f"{200 + t} Q0 doc-{int(d)} {r + 1} {s:.4f} tag\n"
            for t in range(n_topics)
            for r, (d, s) in enumerate(zip(rng.permutation(10 * depth)[:depth], np.sort(rng.random(depth))[::-1]))]
    return "".join(rows).encode()


def _general(data: bytes, name: str) -> Run:
    """The run as the general reader (``tokenize``/``select_rows``) reads it: a leading comment line turns the
    streaming fast path down."""
    return parse_run(Blob.from_bytes(b"# general path\n" + data, name)).unwrap()


def _same(a: Run, b: Run) -> None:
    assert (a.name, a.topics, a.tags, a.ranks_valid) == (b.name, b.topics, b.tags, b.ranks_valid)
    for field in ("topic", "docno", "score", "rank"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field


@pytest.mark.parametrize("from_bytes", [False, True], ids=["path", "bytes"])
@pytest.mark.parametrize("members", [0, 1, 3], ids=["plain", "gzip", "gzip-3-members"])
def test_streamed_run_equals_the_whole_file_read(tmp_path: Path, members: int, from_bytes: bool) -> None:
    text = _lines(40, 3_000)  # ~1.4 MB: several read blocks and chunks
    data = text
    if members:
        cuts = np.linspace(0, len(text), members + 1).astype(int)
        data = b"".join(gzip.compress(text[a:b]) for a, b in pairwise(cuts))
    path = tmp_path / ("run.txt.gz" if members else "run.txt")
    path.write_bytes(data)
    parsed, sha = parse_run_file(RunFile(str(path), data=data if from_bytes else None))
    whole = load(str(path))
    _same(parsed.unwrap(), parse_run(whole).unwrap())
    _same(parsed.unwrap(), _general(text, str(path)))
    assert parsed.unwrap().name == "run.txt"
    assert sha == hashlib.sha256(data).hexdigest() == whole.sha256


def test_docnos_widening_in_a_later_chunk_are_padded(tmp_path: Path) -> None:
    short = "".join(f"{t} Q0 d{i} {i + 1} {1e6 - i} tag\n" for t in range(1, 30) for i in range(2_000))
    long = "".join(f"{t} Q0 a-much-longer-document-id-{i:06d} {i + 1} {1e6 - i} tag\n"
                   for t in range(30, 50) for i in range(2_000))
    path = tmp_path / "widening.run"
    path.write_text(short + long)  # ~3 MB: the wider docnos start in a later chunk
    _same(parse_run_file(RunFile(str(path)))[0].unwrap(), _general(path.read_bytes(), str(path)))


def test_unsorted_lines_stream_too(tmp_path: Path) -> None:
    lines = _lines(30, 500).splitlines(keepends=True)
    shuffled = b"".join(lines[i] for i in np.random.default_rng(3).permutation(len(lines)))
    path = tmp_path / "shuffled.run"
    path.write_bytes(shuffled)
    _same(parse_run_file(RunFile(str(path)))[0].unwrap(), _general(shuffled, str(path)))


@pytest.mark.parametrize(
    ("mangle", "code"),
    [
        (lambda gz: gz[:-50], "gzip-corrupt"),
        (lambda gz: gz + b"trailing", "gzip-corrupt"),
        (lambda gz: gz[:100] + b"\x00" * 64 + gz[164:], "gzip-corrupt"),
    ],
    ids=["truncated", "trailing-bytes", "damaged"],
)
def test_damaged_gzip_reports_like_the_general_reader(tmp_path: Path, mangle: object, code: str) -> None:
    path = tmp_path / "bad.run.gz"
    path.write_bytes(mangle(gzip.compress(_lines(5, 200))))  # type: ignore[operator]
    parsed, sha = parse_run_file(RunFile(str(path)))
    assert sha is None or parsed.value is None
    assert [p.code for p in parsed.problems] == [code]
    assert [p.code for p in parsed.problems] == [p.code for p in parse_run(str(path)).problems]


@pytest.mark.parametrize("pack", [lambda b: b, gzip.compress], ids=["plain", "gzip"])
def test_decode_limits_still_apply(tmp_path: Path, pack: object) -> None:
    text = _lines(4, 100)
    path = tmp_path / "r.run"
    path.write_bytes(pack(text))  # type: ignore[operator]
    gz = path.read_bytes().startswith(b"\x1f\x8b")
    cases = [
        (DecodeLimits(max_bytes=len(text) - 1), "decompressed-too-large" if gz else "input-too-large"),
        (DecodeLimits(max_lines=399), "too-many-lines"),
        (DecodeLimits(max_line_bytes=10), "line-too-long"),
    ]
    for limits, code in cases:
        parsed, sha = parse_run_file(RunFile(str(path), limits=limits))
        assert parsed.value is None and sha is None
        assert [p.code for p in parsed.problems] == [code]
    exact = DecodeLimits(max_bytes=len(text), max_lines=400)
    assert parse_run_file(RunFile(str(path), limits=exact))[0].value is not None


@pytest.mark.parametrize("pack", [lambda b: b, gzip.compress], ids=["plain", "gzip"])
@pytest.mark.parametrize("mangle", [lambda b: b"\xef\xbb\xbf" + b, lambda b: b[:-9], lambda b: b + b"x\0y\n"],
                         ids=["byte-order-mark", "cut", "nul"])
def test_bytes_read_like_a_blob(pack: object, mangle: object) -> None:
    data = mangle(pack(_lines(3, 50)))  # type: ignore[operator]
    parsed, sha = parse_run_file(RunFile("r.run", data=data))
    try:
        expected = parse_run(Blob.from_bytes(data, "r.run"))
    except InputError as exc:
        assert sha is None and parsed.problems == tuple(exc.problems)
        return
    assert sha == hashlib.sha256(data).hexdigest()
    assert [p.code for p in parsed.problems] == [p.code for p in expected.problems]
    if expected.value is not None:
        assert parsed.value is not None
        _same(parsed.value, expected.value)


def test_problems_and_missing_files_take_the_general_path(tmp_path: Path) -> None:
    path = tmp_path / "dup.run"
    path.write_bytes(b"1 Q0 a 1 2.0 t\n1 Q0 a 2 1.0 t\n")
    parsed, _ = parse_run_file(RunFile(str(path)))
    assert [p.code for p in parsed.problems] == ["duplicate-docno"]
    missing, sha = parse_run_file(RunFile(str(tmp_path / "nope.run")))
    assert sha is None and [p.code for p in missing.problems] == ["file-not-found"]


def _duplicates_by_sorting(group: np.ndarray, hashes: np.ndarray) -> bool:
    key = hashes + group.astype(np.uint64) * GROUP_MULT
    key.sort()
    return bool((key[1:] == key[:-1]).any())


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 200_000), st.integers(1, 3_000), st.booleans(), st.integers(0, 2), st.integers(0, 2**32))
def test_has_duplicates_agrees_with_sorting(n: int, groups: int, grouped: bool, plant: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    group = np.sort(rng.integers(0, groups, n)) if grouped else rng.integers(0, groups, n)
    hashes = rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64) >> np.uint64(rng.integers(0, 60))
    if plant and n > 1:  # one real duplicate (same group and value), or one value shared across groups
        i, j = rng.integers(0, n, 2)
        hashes[i] = hashes[j]
        if plant == 1:
            group[i] = group[j]
    assert has_duplicates(group, hashes) == _duplicates_by_sorting(group, hashes)


def _intern_by_sorting(heads: np.ndarray, lengths: np.ndarray) -> tuple[tuple[str, ...], np.ndarray]:
    labels, inverse = np.unique(heads, return_inverse=True)
    return tuple(v.decode() for v in labels.tolist()), np.repeat(inverse.ravel(), lengths)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30_000), st.integers(1, 20_000), st.integers(0, 2**32))
def test_intern_runs_agrees_with_unique(n: int, distinct: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    pool = np.array([str(v).encode() for v in rng.integers(0, 10**int(rng.integers(1, 9)), distinct)], dtype="S8")
    heads = pool[rng.integers(0, pool.size, n)]
    lengths = rng.integers(1, 4, n)
    words = np.zeros((n, 2), dtype=np.uint64)
    words[:, 0] = words_of(heads)[:, 0]
    labels, index = intern_runs(words, lengths)
    expected_labels, expected_index = _intern_by_sorting(heads, lengths)
    assert labels == expected_labels and np.array_equal(index, expected_index)


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, 5e-324, -5e-324, 1e308, 0.5, 0.25])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 50_000), st.integers(1, 500), st.integers(0, 3), st.integers(0, 2**32))
def test_score_order_is_lexsort(n: int, topics: int, style: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    topic = rng.integers(0, topics, n)
    score = [rng.standard_normal(n), np.round(rng.random(n), 2), rng.choice(SPECIAL, n), np.full(n, 3.5)][style]
    assert np.array_equal(_by_score(topic, score), np.lexsort((-score, topic)))


def test_columns_are_sized_from_the_texts_length_and_a_pipe_is_not_peeked(tmp_path: Path) -> None:
    """``_text_size``: a plain file's size, a gzip file's trailer (its text's length), nothing for a pipe -- which
    is not opened at all (opening a FIFO blocks until a writer comes; reading its head would take it from the
    parser)."""
    import os

    from evaluation.formats.trec_run import RunFile, _text_size

    text = "".join(f"{q} Q0 d{q}-{r} {r} {100 - r}.5 tag\n" for q in range(1, 40) for r in range(1, 60)).encode()
    plain, packed = tmp_path / "run.txt", tmp_path / "run.txt.gz"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text))
    assert _text_size(RunFile(str(plain))) == len(text) == _text_size(RunFile("x", data=text))
    assert _text_size(RunFile(str(packed))) == len(text) == _text_size(RunFile("x", data=packed.read_bytes()))
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert _text_size(RunFile(str(fifo))) is None  # returns at once: no writer is needed

"""The readers on real data and on tricky but valid inputs: what they load, and that numbers parse exactly.

Real data (``<repo>/../shared/data`` or ``$EVALSERVE_SHARED_DATA``, through the ``shared_file`` fixture of
``tests/conftest.py``): counts are those of the data READMEs; where a README gives none, a plain Python
``split()`` of the same file is the oracle. Tests needing the data are skipped, with the reason, without it.
"""

from __future__ import annotations

import gzip
import io
import math
import struct
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.formats import parse_evall, parse_intent_weights, parse_qrels, parse_run
from evaluation.formats.source import Blob
from evaluation.model import Qrels, Run

BAD = Path(__file__).resolve().parents[2] / "data" / "bad"
WEB = "trec-web-2009-2014"
Locate = Callable[..., Path]
Judgment = tuple[str, str, str, int]


def judgments(q: Qrels) -> list[Judgment]:
    """(topic, intent, docno, grade) rows of a qrels, in its (sorted) order."""
    docnos = [d.decode() for d in q.docnos.tolist()]
    return [
        (q.topics[t], q.intents[i], docnos[d], g)
        for t, i, d, g in zip(q.topic.tolist(), q.intent.tolist(), q.doc.tolist(), q.grade.tolist())
    ]


def plain_lines(path: Path) -> list[list[str]]:
    """The oracle: whitespace-split non-blank lines, gzip or not."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return [line.split() for line in data.decode().splitlines() if line.strip()]


def clean(parsed: Any) -> Any:
    assert parsed.problems == (), [str(p) for p in parsed.problems]
    assert parsed.value is not None
    return parsed.value


def bits(values: Any) -> list[int]:
    return [struct.unpack("<q", struct.pack("<d", v))[0] for v in np.asarray(values, dtype=np.float64).tolist()]


# ----------------------------------------------------------------------------------- TREC Web diversity qrels

# file -> (rows, topics, (topic, subtopic) pairs incl. subtopic 0, rows of subtopic 0, topics with only
# subtopic 0, grades); from trec-web-2009-2014/README.txt (subtopic-0 figures counted from the files)
DIVERSITY = {
    "2009/qrels.diversity": (27964, 50, 249, 21465, 0, {0, 1}),
    "2010/10.diversity-qrels.final.txt": (9006, 48, 200, 0, 0, {1}),
    "2011/qrels-for-ndeval.txt": (63235, 50, 164, 0, 0, {0, 1, 2, 3}),
    "2012/qrels-for-ndeval.txt": (59736, 50, 187, 0, 0, {0, 1, 2, 3, 4}),
    "2013/qrels.ndeval.txt": (44814, 50, 152, 6985, 25, {0, 1, 2, 3, 4}),
    "2014/qrels.ndeval.txt": (43840, 50, 156, 7238, 24, {0, 1, 2, 3, 4}),
}


@pytest.mark.parametrize("name", sorted(DIVERSITY))
def test_trec_web_diversity_qrels(shared_file: Locate, name: str) -> None:
    rows, n_topics, n_pairs, zero_rows, only_zero, grades = DIVERSITY[name]
    path = shared_file(WEB, name)
    q = clean(parse_qrels(str(path)))
    assert len(q) == rows
    assert len(q.topics) == n_topics
    rows_ = judgments(q)
    pairs = {(t, i) for t, i, _, _ in rows_}
    assert len(pairs) == n_pairs
    assert sum(1 for _, i, _, _ in rows_ if i == "0") == zero_rows
    by_topic: dict[str, set[str]] = {}
    for t, i in pairs:
        by_topic.setdefault(t, set()).add(i)
    assert sum(1 for s in by_topic.values() if s == {"0"}) == only_zero
    assert set(q.grade.tolist()) == grades
    # the same rows as a plain split, nothing lost or merged
    assert sorted(rows_) == sorted((t, i, d, int(g)) for t, i, d, g in plain_lines(path))


def test_2009_subtopic_zero_rows_are_judged_nonrelevant(shared_file: Locate) -> None:
    q = clean(parse_qrels(str(shared_file(WEB, "2009/qrels.diversity"))))
    zero = [g for _, i, _, g in judgments(q) if i == "0"]
    assert len(zero) == 21465 and set(zero) == {0}


@pytest.mark.parametrize(
    ("name", "n_topics"),
    [
        ("2010/10.adhoc-qrels.final.txt", 48),
        ("2011/qrels.adhoc.txt", 50),
        ("2012/qrels.adhoc.txt", 50),
        ("2013/qrels.adhoc.txt", 50),
        ("2014/qrels.adhoc.txt", 50),
        ("2012/qrels.diversity.txt", 50),
    ],
)
def test_trec_web_qrels_keep_spam_grades(shared_file: Locate, name: str, n_topics: int) -> None:
    path = shared_file(WEB, name)
    q = clean(parse_qrels(str(path)))
    oracle = plain_lines(path)
    assert len(q) == len(oracle)
    assert len(q.topics) == n_topics
    assert Counter(q.grade.tolist()) == Counter(int(row[3]) for row in oracle)
    assert q.grade.min() == -2  # spam, kept as it is


def test_2012_diversity_with_spam_has_62394_rows(shared_file: Locate) -> None:
    q = clean(parse_qrels(str(shared_file(WEB, "2012/qrels.diversity.txt"))))
    assert len(q) == 62394


# ----------------------------------------------------------------------------------- NTCIR, EvALL


def test_ntcir_www1_qrels(shared_file: Locate) -> None:
    q = clean(parse_qrels(str(shared_file("ntcir-www", "wwwE.qrels"))))
    assert len(q) == 22912
    assert q.topics == tuple(f"{i:04d}" for i in range(1, 101))  # leading zeros kept
    assert q.intents == ("0",)
    assert Counter(q.grade.tolist()) == {0: 8383, 1: 4751, 2: 4329, 3: 3866, 4: 1583}


def test_evall_gold_standard(shared_file: Locate) -> None:
    gold, weights = clean(parse_evall(str(shared_file("rbu-sigir18", "qrels.all_EvALL_FORMAT.txt"))))
    assert len(gold) == 43840
    assert gold.topics == tuple(str(t) for t in range(251, 301))
    # README: the 2014 ndeval qrels with weight 1/#subtopics, exactly
    ndeval = clean(parse_qrels(str(shared_file(WEB, "2014/qrels.ndeval.txt"))))
    assert judgments(gold) == judgments(ndeval)
    assert set(weights.weights) == set(gold.topics)
    for topic, per_intent in weights.weights.items():
        assert all(w == 1 / len(per_intent) for w in per_intent.values()), (topic, per_intent)
    single = [t for t, w in weights.weights.items() if set(w) == {"0"}]
    assert len(single) == 24 and all(weights.weights[t] == {"0": 1.0} for t in single)


def test_evall_weights_cover_every_aspect(shared_file: Locate) -> None:
    gold, weights = clean(parse_evall(str(shared_file("rbu-sigir18", "qrels.all_EvALL_FORMAT.txt"))))
    aspects: dict[str, set[str]] = {}
    for t, i, _, _ in judgments(gold):
        aspects.setdefault(t, set()).add(i)
    assert {t: set(w) for t, w in weights.weights.items()} == aspects


# ----------------------------------------------------------------------------------- runs, gzip, stdin

# file -> (rows, min depth, max depth); rows counted from the files, depths from the README
RUNS = {
    "ql-results-cata.txt.gz": (50000, 1000, 1000),
    "ql-results-catb.txt.gz": (49413, None, 1000),
    "ql-results-cata-filtered.txt": (8060, 5, 837),
    "ql-results-catb-filtered.txt": (21512, 5, 837),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_trec_web_2012_runs(shared_file: Locate, name: str) -> None:
    rows, low, high = RUNS[name]
    path = shared_file("trec-web-2012-runs", "runs", name)
    run: Run = clean(parse_run(str(path)))
    assert run.name == name.removesuffix(".gz")
    assert len(run) == rows
    assert len(run.topics) == 50
    assert run.tags == ("indri",)
    assert run.ranks_valid
    depth = Counter(run.topic.tolist())
    assert max(depth.values()) <= high
    if low is not None:
        assert min(depth.values()) >= low
    oracle = plain_lines(path)
    assert [d.decode() for d in run.docno.tolist()] == [r[2] for r in oracle]
    assert run.rank.tolist() == [int(r[3]) for r in oracle]
    assert bits(run.score) == bits([float(r[4]) for r in oracle])  # bit for bit, as strtod
    assert [run.topics[t] for t in run.topic.tolist()] == [r[0] for r in oracle]


def test_filtered_runs_keep_their_rank_gaps(shared_file: Locate) -> None:
    run: Run = clean(parse_run(str(shared_file("trec-web-2012-runs", "runs", "ql-results-cata-filtered.txt"))))
    first = run.topic == run.topic[0]
    ranks = run.rank[first]
    assert ranks.max() > ranks.size  # gaps (1, 2, 4, ...) are kept


class FakeStdin:
    def __init__(self, data: bytes) -> None:
        self.buffer = io.BytesIO(data)


def test_run_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", FakeStdin(b"1 Q0 d1 1 0.5 t\n1 Q0 d2 2 0.25 t\n"))
    run: Run = clean(parse_run("-"))
    assert run.name == "<stdin>"
    assert run.score.tolist() == [0.5, 0.25]


def test_gzip_run_from_stdin_keeps_the_given_name(shared_file: Locate, monkeypatch: pytest.MonkeyPatch) -> None:
    path = shared_file("trec-web-2012-runs", "runs", "ql-results-catb.txt.gz")
    monkeypatch.setattr(sys, "stdin", FakeStdin(path.read_bytes()))
    run: Run = clean(parse_run("-", name="catb"))
    assert run.name == "catb"
    assert len(run) == 49413


def test_qrels_and_weights_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", FakeStdin(b"1 0 d1 2\n1 0 d2 0\n"))
    assert judgments(clean(parse_qrels("-"))) == [("1", "0", "d1", 2), ("1", "0", "d2", 0)]
    monkeypatch.setattr(sys, "stdin", FakeStdin(b"1 a 0.25\n1 b 0.75\n"))
    assert clean(parse_intent_weights("-")).weights == {"1": {"a": 0.25, "b": 0.75}}


def test_stdin_problems_name_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", FakeStdin(b"1 Q0 d1 1 x t\n"))
    parsed = parse_run("-")
    assert [(p.code, p.source, p.line, p.column) for p in parsed.problems] == [
        ("score-not-numeric", "<stdin>", 1, 11)
    ]


# ----------------------------------------------------------------------------------- tricky valid inputs


def bad(name: str) -> str:
    return str(BAD / name)


def test_bom_is_not_part_of_the_first_topic() -> None:
    run: Run = clean(parse_run(bad("run-bom.run")))
    assert run.topics == ("1",)
    assert run.docno.tolist() == [b"d1", b"d2"]


def test_crlf_and_whitespace_do_not_leak_into_fields() -> None:
    run: Run = clean(parse_run(bad("run-crlf.run")))
    assert run.tags == ("tag",)
    assert run.topics == ("1", "2")
    mixed: Run = clean(parse_run(bad("run-mixed-whitespace.run")))
    assert mixed.tags == ("tag",) and mixed.topics == ("1", "2")
    assert mixed.docno.tolist() == [b"d1", b"d2", b"d1"]
    assert mixed.score.tolist() == [0.9, 0.8, 0.7]
    q = clean(parse_qrels(bad("qrels-crlf-tabs.qrels")))
    assert judgments(q) == [("51", "0", "d1", 0), ("51", "1", "d1", 1), ("51", "2", "d2", 1), ("52", "0", "d1", 0)]
    w = clean(parse_intent_weights(bad("intents-valid.txt")))
    assert w.weights == {"0001": {"1": 0.5, "2": 0.3, "3": 0.2}, "0002": {"1": 1.0}}


def test_missing_final_newline_keeps_the_last_line() -> None:
    run: Run = clean(parse_run(bad("run-no-final-newline.run")))
    assert run.score.tolist() == [0.9, 0.8]


def test_valid_gzip_run_is_named_without_gz() -> None:
    run: Run = clean(parse_run(bad("run-gzip-valid.run.gz")))
    assert run.name == "run-gzip-valid.run"
    assert len(run) == 3


def test_valid_scores_parse_as_python_float() -> None:
    path = BAD / "run-scores-valid.run"
    run: Run = clean(parse_run(str(path)))
    texts = [row[4] for row in plain_lines(path)]
    assert "-inf" in texts and "1e-05" in texts
    assert bits(run.score) == bits([float(t) for t in texts])
    assert math.isinf(run.score[1]) and run.score[1] < 0
    assert math.copysign(1.0, run.score[7]) == -1.0  # "-0" keeps its sign


def test_negative_grades_are_kept() -> None:
    q = clean(parse_qrels(bad("qrels-negative-grade.qrels")))
    assert [g for *_, g in judgments(q)] == [-2, 0, 2, -1]


def test_ntcir_labels() -> None:
    q = clean(parse_qrels(bad("qrels-ntcir-labels.qrels")))
    assert q.intents == ("0",)
    assert judgments(q) == [
        ("0001", "0", "d1", 2), ("0001", "0", "d2", 0), ("0001", "0", "d3", 4), ("0001", "0", "d4", 3),
        ("0002", "0", "d1", 1),
    ]


def test_evall_quoted_and_bare_read_the_same() -> None:
    quoted, qw = clean(parse_evall(bad("evall-quoted.tsv")))
    bare, bw = clean(parse_evall(bad("evall-unquoted.tsv")))
    assert judgments(quoted) == judgments(bare) == [
        ("1", "a", "d1", 1), ("1", "b", "d2", 0), ("2", "a", "d1", 2),
    ]
    assert qw.weights == bw.weights == {"1": {"a": 0.5, "b": 0.5}, "2": {"a": 1.0}}


def test_warnings_keep_the_value() -> None:
    tags = parse_run(bad("run-multiple-tags.run"))
    assert tags.value is not None and tags.value.tags == ("sysA", "sysB")
    ranks = parse_run(bad("run-rank-not-integer.run"))
    assert ranks.value is not None and not ranks.value.ranks_valid
    assert len(ranks.value) == 4


def test_path_and_blob_read_the_same() -> None:
    for name in ("run-many-problems.run", "run-crlf-error.run", "run-bom-error.run"):
        path = BAD / name
        by_path = parse_run(str(path))
        by_blob = parse_run(Blob.from_bytes(path.read_bytes(), name=str(path)))
        assert by_path.problems == by_blob.problems


# ----------------------------------------------------------------------------------- exact number parsing

#: how runs print scores: repr, C's %.6f (trec_eval's own), %.17g and %e (format() specs equal to printf's)
FORMATS: list[Callable[[float], str]] = [
    repr, lambda x: format(x, ".6f"), lambda x: format(x, ".17g"), lambda x: format(x, "e"),
]
FINITE = st.floats(allow_nan=False, allow_infinity=False)


def _run_of(scores: list[str], ranks: list[str] | None = None) -> Run:
    ranks = ranks or [str(i + 1) for i in range(len(scores))]
    text = "".join(f"q1 Q0 d{i} {r} {s} t\n" for i, (r, s) in enumerate(zip(ranks, scores)))
    return clean(parse_run(Blob.from_bytes(text.encode(), name="h.run")))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(FINITE, st.floats(allow_nan=False)), min_size=1, max_size=40))
def test_scores_parse_bit_identical_to_float(values: list[float]) -> None:
    texts = [fmt(v) for v in values for fmt in FORMATS]
    run = _run_of(texts)
    assert bits(run.score) == bits([float(t) for t in texts])


def _decimal(mantissa: int, places: int) -> str:
    digits = str(abs(mantissa)).rjust(places + 1, "0")
    body = f"{digits[:-places]}.{digits[-places:]}" if places else digits
    return ("-" if mantissa < 0 else "") + body


#: plain decimals around the vectorised fast path's limits: 2**53 mantissas, 18 digits, 22 fraction digits
DECIMALS = st.builds(
    _decimal,
    st.one_of(st.integers(-(10**20), 10**20), st.integers(2**53 - 3, 2**53 + 3), st.integers(-999, 999)),
    st.integers(0, 25),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(DECIMALS, min_size=1, max_size=40))
def test_decimal_strings_parse_bit_identical_to_float(texts: list[str]) -> None:
    assert bits(_run_of(texts).score) == bits([float(t) for t in texts])


INT62 = st.integers(min_value=-(2**62) + 1, max_value=2**62 - 1)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(INT62, st.integers(-1000, 1000)), min_size=1, max_size=40))
def test_integers_parse_exactly(values: list[int]) -> None:
    texts = [str(v) for v in values]
    run = _run_of(texts, ranks=texts)
    assert bits(run.score) == bits([float(t) for t in texts])  # integer scores: as float() rounds them
    assert run.rank.tolist() == values and run.ranks_valid
    qrels = "".join(f"1 0 d{i} {v}\n" for i, v in enumerate(values)).encode()
    q = clean(parse_qrels(Blob.from_bytes(qrels, name="h.qrels")))
    assert sorted(g for *_, g in judgments(q)) == sorted(values)
    ntcir = "".join(f"1 d{i} L{v}\n" for i, v in enumerate(values)).encode()
    assert sorted(g for *_, g in judgments(clean(parse_qrels(Blob.from_bytes(ntcir, name="h.ntcir"))))) == sorted(
        values
    )


def test_huge_integers_are_not_grades() -> None:
    parsed = parse_qrels(Blob.from_bytes(b"1 0 d1 99999999999999999999\n", name="big.qrels"))
    assert [p.code for p in parsed.problems] == ["grade-not-integer"]

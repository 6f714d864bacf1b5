"""The diversity path's shortcuts give the same doubles as the straightforward computations they replace.

* The greedy ideal stepping over intent signatures equals the document-by-document loop, bit for bit (ties,
  alpha = 0, topics with more intents than a signature holds).
* Cutoffs up to 20 read running sums; deeper cutoffs sum masked terms: on lists shorter than 20 both agree exactly.
* Values shared between runs evaluated on the same topics (greedy ideal per evaluated topic, normalisers) do not
  leak between runs evaluated on different topics.
* The qrels reader's shortcuts (runs of repeated docnos, files already sorted) build the same Qrels.
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation import Evaluator, Qrels, read_qrels, read_run
from evaluation.formats.keys import unique_strings
from evaluation.formats.source import Blob
from evaluation.intent_ranking import intent_slots
from evaluation.measures.diversity._shared import IdealGains, _greedy

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: docnos whose byte order matters for the greedy's tie rule (larger docno first)
DOCNOS = ("d1", "d2", "d9", "d10", "d11", "d10a", "D5", "e1", "e2", "f", "g", "h")


def _qrels(rows: list[tuple[str, str, str, int]]) -> Qrels:
    return read_qrels(Blob.from_bytes("".join(f"{t} {i} {d} {g}\n" for t, i, d, g in rows).encode()))


@st.composite
def qrels_rows(draw: st.DrawFn, max_intents: int = 5) -> list[tuple[str, str, str, int]]:
    """Judgments for 1-4 topics: each document judged for some intents, grades 0-3 (many ties)."""
    rows = []
    for topic in draw(st.lists(st.sampled_from(["1", "2", "10", "q"]), min_size=1, max_size=4, unique=True)):
        n_intents = draw(st.integers(1, max_intents))
        for doc in draw(st.lists(st.sampled_from(DOCNOS), min_size=1, max_size=len(DOCNOS), unique=True)):
            for intent in draw(st.lists(st.integers(1, n_intents), min_size=1, max_size=n_intents, unique=True)):
                rows.append((topic, str(intent), doc, draw(st.sampled_from([0, 1, 1, 2, 3]))))
    return rows


def _same(a: IdealGains, b: IdealGains) -> bool:
    return a.offsets.tobytes() == b.offsets.tobytes() and a.gain.tobytes() == b.gain.tobytes()


def _oracle_greedy(rows: list[tuple[str, str, str, int]], alpha: float, level: int) -> list[float]:
    """ndeval's greedy in plain Python floats, topic by topic (sorted labels): each step the largest marginal
    gain -- the intents' factors summed in intent order from 0 -- ties to the larger docno (byte-wise)."""
    gains: list[float] = []
    for topic in sorted({t for t, *_ in rows}):
        relevant = {(d, i) for t, i, d, g in rows if t == topic and g >= level}
        intents = sorted({i for _, i in relevant})
        pool = sorted({d for d, _ in relevant})
        factor = dict.fromkeys(intents, 1.0)
        while pool:
            marginal = {}
            for d in pool:
                total = 0.0
                for i in intents:
                    if (d, i) in relevant:
                        total += factor[i]
                marginal[d] = total
            best = max(pool, key=lambda d: (marginal[d], d.encode()))
            gains.append(marginal[best])
            pool.remove(best)
            for i in intents:
                if (best, i) in relevant:
                    factor[i] *= 1.0 - alpha
    return gains


@SETTINGS
@given(rows=qrels_rows(), alpha=st.sampled_from([0.0, 0.25, 0.5, 0.8, 0.99]), level=st.sampled_from([1, 2]))
def test_greedy_by_signature_equals_the_document_loop(
    rows: list[tuple[str, str, str, int]], alpha: float, level: int
) -> None:
    slots = intent_slots(_qrels(rows), level)
    by_signature = _greedy(slots, alpha)
    # unit gains take the document-by-document loop; 1.0 * factor == factor, so the gains must be identical
    by_document = _greedy(slots, alpha, np.ones(slots.pair_slot.size))
    assert _same(by_signature, by_document)
    assert by_signature.gain.tolist() == _oracle_greedy(rows, alpha, level)


def test_greedy_tie_rule_decides_later_gains() -> None:
    """Three documents tie at first (gain 2); which goes first changes the next gains: ``c`` (the larger
    docno) is taken first, as ndeval does, so the ideal is 2, 1.5, 1.5, ... and not 2, 2, 1, ..."""
    rows = [("1", i, d, 1) for d, intents in {"a": "12", "b": "34", "c": "13", "e": "2", "f": "4"}.items()
            for i in intents]
    gains = _greedy(intent_slots(_qrels(rows), 1), 0.5).gain.tolist()
    assert gains == _oracle_greedy(rows, 0.5, 1) == [2.0, 1.5, 1.5, 0.5, 0.5]


def test_greedy_with_more_intents_than_a_signature_holds() -> None:
    rng = random.Random(7)
    rows = [("1", str(i), f"d{rng.randrange(40)}", 1) for i in range(70)]  # one topic, 70 intents
    rows += [("2", str(i % 3), f"d{i}", 1) for i in range(12)]
    rows = sorted(set(rows))
    slots = intent_slots(_qrels(rows), 1)
    assert _same(_greedy(slots, 0.5), _greedy(slots, 0.5, np.ones(slots.pair_slot.size)))


@SETTINGS
@given(rows=qrels_rows(), data=st.data())
def test_running_sums_equal_masked_sums(rows: list[tuple[str, str, str, int]], data: st.DataObject) -> None:
    """Lists shorter than 20: @20 (running sums) and @21, @500 (masked sums) are the same doubles."""
    topics = sorted({t for t, *_ in rows})
    lines = []
    for t in topics:
        docs = data.draw(st.lists(st.sampled_from((*DOCNOS, "u1", "u2")), min_size=1, max_size=14, unique=True))
        lines += [f"{t} Q0 {d} {r} {100 - r} x\n" for r, d in enumerate(docs, start=1)]
    run = read_run(Blob.from_bytes("".join(lines).encode()))
    names = [f"{m}@{k}" for m in ("alpha_nDCG", "nERR_IA", "alpha_DCG(variant=paper)") for k in (20, 21, 500)]
    scores = Evaluator.from_names(_qrels(rows), names).evaluate(run)
    for m in ("alpha_nDCG", "nERR_IA", "alpha_DCG(variant=paper)"):
        at20 = scores.values[f"{m}@20"].tobytes()
        assert at20 == scores.values[f"{m}@21"].tobytes() == scores.values[f"{m}@500"].tobytes(), m


def test_values_shared_by_topic_list_do_not_leak_between_runs() -> None:
    """One evaluator fed runs over different topic lists, alternately, gives what fresh evaluators give."""
    rows = [(t, str(i), f"d{(7 * j + i) % 13}", (i + j) % 3) for t in ("1", "2", "3") for i in range(1, 4)
            for j in range(6)]
    qrels = _qrels(sorted(set(rows)))
    names = ["alpha_nDCG@5", "nERR_IA@10", "ERR_IA@5", "alpha_DCG@20", "nNRBP", "NRBP", "AP_IA", "StRecall@5"]

    def run(topics: str) -> Blob:
        text = "".join(f"{t} Q0 d{d} {r} {50 - r} x\n" for t in topics for r, d in enumerate(range(12, 0, -1), 1))
        return Blob.from_bytes(text.encode())

    shared = Evaluator.from_names(qrels, names)
    for topics in ("123", "13", "123", "2", "2", "31"):
        got = shared.evaluate(read_run(run(topics)))
        want = Evaluator.from_names(qrels, names).evaluate(read_run(run(topics)))
        assert got.topics == want.topics
        for name in want.values:
            assert got.values[name].tobytes() == want.values[name].tobytes(), (topics, name)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from((*DOCNOS, "d", "zz", "a-very-long-document-identifier-1")),
                          st.integers(1, 4)), max_size=30))
def test_unique_strings_with_repeated_neighbours(runs: list[tuple[str, int]]) -> None:
    values = np.array([d.encode() for d, n in runs for _ in range(n)], dtype="S40")
    unique, inverse = unique_strings(values)
    want_unique, want_inverse = np.unique(values, return_inverse=True)
    assert unique.tolist() == want_unique.tolist()
    assert inverse.tolist() == want_inverse.ravel().tolist()


@SETTINGS
@given(rows=qrels_rows(), seed=st.integers(0, 1000))
def test_sorted_and_shuffled_qrels_read_the_same(rows: list[tuple[str, str, str, int]], seed: int) -> None:
    ordered = sorted(set(rows), key=lambda r: (r[0], r[2].encode(), r[1]))
    shuffled = list(ordered)
    random.Random(seed).shuffle(shuffled)
    a, b = _qrels(ordered), _qrels(shuffled)
    assert (a.topics, a.intents, a.docnos.tolist()) == (b.topics, b.intents, b.docnos.tolist())
    for field in ("topic", "intent", "doc", "grade"):
        assert getattr(a, field).tolist() == getattr(b, field).tolist(), field

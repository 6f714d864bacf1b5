"""Parity with pyndeval (ndeval's C code) on generated inputs, per topic, to 1e-9.

pyndeval orders a run by score (as 32-bit floats) and breaks ties by docno *ascending*, unlike ndeval's
``-traditional`` (docno descending; our ``ties=trec``, checked against ndeval's printed outputs elsewhere).
So each generated run is given to us with pyndeval's order written in the rank column and evaluated with
``ties=rank``: the tie rule is the only thing this test does not exercise.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation import Evaluator, read_qrels, read_run
from evaluation.formats.source import Blob

pyndeval = pytest.importorskip("pyndeval")

NAMES = {
    "ERR-IA": "ERR_IA",
    "nERR-IA": "nERR_IA",
    "alpha-DCG": "alpha_DCG",
    "alpha-nDCG": "alpha_nDCG",
    "P-IA": "P_IA",
    "strec": "StRecall",
    "MAP-IA": "AP_IA",
    "NRBP": "NRBP",
    "nNRBP": "nNRBP",
}
CUTOFFS = (1, 2, 3, 5, 10, 20)
ORACLE_MEASURES = [f"{m}@{k}" for m in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG", "P-IA", "strec")
                   for k in CUTOFFS] + ["NRBP", "nNRBP", "MAP-IA"]

DOCNOS = [f"d{i}" for i in range(1, 13)] + ["d10a", "D5", "e1"]


@st.composite
def topics(draw: st.DrawFn) -> tuple[list[tuple[str, str, str, int]], list[tuple[str, str, float]]]:
    """Qrels (topic, subtopic, docno, grade) and a run (topic, docno, score) for 1-3 topics."""
    qrels: list[tuple[str, str, str, int]] = []
    run: list[tuple[str, str, float]] = []
    for topic in range(1, draw(st.integers(1, 3)) + 1):
        n_sub = draw(st.integers(1, 5))
        judged = draw(st.lists(st.sampled_from(DOCNOS), min_size=1, max_size=10, unique=True))
        for doc in judged:
            subs = draw(st.lists(st.integers(0, n_sub), min_size=1, max_size=n_sub + 1, unique=True))
            for sub in subs:  # some intents end up with no relevant document (grade 0 only)
                qrels.append((str(topic), str(sub), doc, draw(st.sampled_from([0, 0, 1, 1, 2, 4]))))
        retrieved = draw(st.lists(st.sampled_from(DOCNOS), min_size=0, max_size=14, unique=True))
        for doc in retrieved:  # few distinct scores: many ties
            run.append((str(topic), doc, float(draw(st.integers(0, 4)))))
    return qrels, run


def _pyndeval_order(run: list[tuple[str, str, float]]) -> list[tuple[str, str, float, int]]:
    ranked = sorted(run, key=lambda r: (r[0], -np.float32(r[2]), r[1]))
    out, last, rank = [], None, 0
    for topic, doc, score in ranked:
        rank = rank + 1 if topic == last else 1
        last = topic
        out.append((topic, doc, score, rank))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topics(), st.sampled_from([0.5, 0.25, 0.8]), st.sampled_from([0.5, 0.9]))
def test_ndeval_measures_equal_pyndeval(case: tuple[list, list], alpha: float, beta: float) -> None:
    qrels_rows, run_rows = case
    if not run_rows:
        return
    oracle = pyndeval.RelevanceEvaluator(qrels_rows, ORACLE_MEASURES, alpha=alpha, beta=beta).evaluate(run_rows)
    ranked = _pyndeval_order(run_rows)
    qrels = read_qrels(Blob.from_bytes("".join(f"{t} {s} {d} {g}\n" for t, s, d, g in qrels_rows).encode()))
    run = read_run(Blob.from_bytes("".join(f"{t} Q0 {d} {r} {s!r} x\n" for t, d, s, r in ranked).encode()))
    ours_names = {}
    for m in ORACLE_MEASURES:
        base, _, cut = m.partition("@")
        params = f"(alpha={alpha})" if base not in ("P-IA", "strec", "MAP-IA") else ""
        if base in ("NRBP", "nNRBP"):
            params = f"(alpha={alpha},beta={beta})"
        ours_names[m] = NAMES[base] + params + (f"@{cut}" if cut else "")
    scores = Evaluator.from_names(qrels, ours_names.values(), ties="rank").evaluate(run)
    for topic, values in oracle.items():
        for m, expected in values.items():
            name = scores_name(scores, ours_names[m])
            got = scores.per_topic(name)[topic]
            if np.isnan(expected):  # pyndeval divides 0 by 0 for a topic without relevant documents
                assert got == 0.0
                continue
            assert got == pytest.approx(expected, abs=1e-9), f"topic {topic} {m}: pyndeval {expected}, ours {got}"


def scores_name(scores: object, name: str) -> str:
    """The canonical spelling our results use for a name (defaults are omitted)."""
    from evaluation import parse_measure

    return parse_measure(name).name

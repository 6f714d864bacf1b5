"""A topic's value depends on that topic alone, to the last bit: two topics with the same judgments and the same
ranking (under other docnos, after other topics with other values) score exactly alike under every measure.
Running sums are computed per topic, so no rounding is carried over from the topics before (found by the
meta-evaluation reproduction: MU compares scores exactly)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.evaluator import Evaluator
from evaluation.formats import Blob, parse_qrels, parse_run
from evaluation.measures.registry import default_registry


def _inputs(seed: int) -> tuple[bytes, bytes]:
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    pattern = [(f"d{i}", int(rng.integers(0, 4)), int(rng.integers(1, 4))) for i in range(40)]
    for topic in ("1", "2", "3", "4"):
        if topic in ("1", "3"):  # noise topics before each copy
            for i in range(int(rng.integers(5, 60))):
                qrels.append(f"{topic} {int(rng.integers(1, 4))} n{i} {int(rng.integers(0, 3))}")
                run.append(f"{topic} Q0 n{i} {i + 1} {rng.random() * 100:.17g} t")
            continue
        for rank, (doc, grade, intent) in enumerate(pattern):
            qrels.append(f"{topic} {intent} {topic}-{doc} {grade}")
            run.append(f"{topic} Q0 {topic}-{doc} {rank + 1} {1000 - rank * 1.37:.17g} t")
    return "\n".join(qrels).encode(), "\n".join(run).encode()


MEASURES = [d.example() for d in default_registry() if set(d.inputs) <= {"adhoc", "intents"}] + [
    "ERR@20", "ERR_IA(variant=paper)@20", "RBU(p=0.99,e=0.05)@20", "CT@20", "D_Q@20", "Q", "nDCG(gain=exp)@20",
    "RBP(rel=graded)", "alpha_nDCG(gain=graded)@20", "EU",
]


@pytest.mark.parametrize("seed", range(5))
def test_equal_topics_score_bit_for_bit_alike(seed: int) -> None:
    qrels_text, run_text = _inputs(seed)
    qrels = parse_qrels(Blob.from_bytes(qrels_text, "q")).unwrap()
    run = parse_run(Blob.from_bytes(run_text, "r")).unwrap()
    scores = Evaluator.from_names(qrels, MEASURES).evaluate(run)
    at = {t: i for i, t in enumerate(scores.topics)}
    for name, values in scores.values.items():
        assert values[at["2"]] == values[at["4"]], f"{name}: {values[at['2']]!r} != {values[at['4']]!r}"


def test_intent_weighted_sums_do_not_depend_on_the_order_of_the_documents() -> None:
    """P_IA(variant=paper) with unequal intent weights: the same relevant documents at other ranks within the
    cutoff give the same value to the last bit (counted per intent, then weighted)."""
    from evaluation.formats import parse_intent_weights

    qrels = parse_qrels(Blob.from_bytes(b"".join(f"1 {t} d{i} 1\n".encode() for i in range(12)
                                                 for t in (1 + i % 3, 1 + (i * 7) % 5)), "q")).unwrap()
    weights = parse_intent_weights(Blob.from_bytes(b"1 1 0.1\n1 2 0.7\n1 3 0.13\n1 4 0.05\n1 5 0.02\n", "w")).unwrap()
    values = set()
    for seed in range(10):
        order = np.random.default_rng(seed).permutation(12)
        run = parse_run(Blob.from_bytes(b"".join(f"1 Q0 d{d} {r + 1} {100 - r} t\n".encode()
                                                 for r, d in enumerate(order)), "r")).unwrap()
        scores = Evaluator.from_names(qrels, ["P_IA(variant=paper)@12"], intent_weights=weights).evaluate(run)
        values.add(float(scores.values["P_IA(variant=paper)@12"][0]))
    assert len(values) == 1, values

"""RBU with no parameters is the RBU authors' reference implementation (spec Appendix E.1; github
jCarrilloDeAlbornoz/RBU): p = 0.8, e = 0.03, norm = rbp, whole run, r = (2^g - 1)/2^{gmax_t}.

The reference outputs in trec-web-2012-runs/reference/rbu-p0.8-e0.03 were made by that implementation on the
four TREC Web 2012 runs with gold2012_EvALL_FORMAT.tsv (the 2012 diversity qrels in EvALL's format, aspect weight
1/number of subtopics) and each run given in rank-column order (our ``ties="rank"``). They are EvALL TSV reports:
a block of '#' lines, then quoted "Test Case" / "RBU" rows with 4 decimals (the 2014 example of the RBU repository
prints decimal commas). The tolerance is half a unit of the 4th decimal.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from evaluation import IntentWeights, Qrels, read_evall, read_qrels, read_run
from evaluation.evaluator import evaluate

RUNS = ("ql-results-cata", "ql-results-catb", "ql-results-cata-filtered", "ql-results-catb-filtered")
REFERENCE = Path("trec-web-2012-runs", "reference", "rbu-p0.8-e0.03")
TOLERANCE = 5e-5 + 1e-12
Locate = Callable[..., Path]  # the shared_file fixture


def read_evall_report(path: Path) -> dict[str, float]:
    """Per test case values of an EvALL TSV report with one measure (quoted fields, decimal point or comma)."""
    values: dict[str, float] = {}
    header = None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = [f.strip().strip('"') for f in line.split("\t")]
        if header is None:
            header = fields
            assert header[0] == "Test Case" and len(header) == 2, header
            continue
        assert len(fields) == 2, line
        assert fields[0] not in values, f"test case {fields[0]} twice"
        values[fields[0]] = float(fields[1].replace(",", "."))
    return values


def _run_path(data: Path, name: str) -> Path:
    plain = data / "trec-web-2012-runs" / "runs" / f"{name}.txt"
    return plain if plain.exists() else plain.with_suffix(".txt.gz")


@cache
def _gold(data: Path) -> tuple[Qrels, IntentWeights]:
    return read_evall(data / REFERENCE / "gold2012_EvALL_FORMAT.tsv")


@pytest.mark.parametrize("run", RUNS)
def test_rbu_reproduces_the_reference_implementation(shared_data: Path, shared_file: Locate, run: str) -> None:
    expected = read_evall_report(shared_file(*REFERENCE.parts, f"{run}.Results.tsv"))
    qrels, weights = _gold(shared_data)
    scores = evaluate(qrels, [read_run(_run_path(shared_data, run))], ["RBU"], ties="rank", intent_weights=weights)
    ours = scores[0].per_topic("RBU")
    assert len(expected) == 50 and set(expected) == set(ours) == set(qrels.topics)
    wrong = [f"topic {t}: reference {v:.4f}, evalserve {ours[t]:.8f}" for t, v in sorted(expected.items())
             if abs(ours[t] - v) > TOLERANCE]
    assert not wrong, f"{len(wrong)} topics differ:\n" + "\n".join(wrong[:15])
    # the values are not all trivially small: the comparison says something
    assert sum(abs(v) >= 0.01 for v in expected.values()) >= 30


@pytest.mark.parametrize("other", ["RBU(p=0.99,e=0.05)", "RBU(e=0.05)", "RBU(p=0.9)", "RBU(norm=paper)"])
def test_other_parameters_do_not_reproduce_the_reference(shared_data: Path, shared_file: Locate, other: str) -> None:
    """The comparison above discriminates: the spec's research default and near variants miss the reference."""
    run = "ql-results-cata-filtered"
    expected = read_evall_report(shared_file(*REFERENCE.parts, f"{run}.Results.tsv"))
    qrels, weights = _gold(shared_data)
    scores = evaluate(qrels, [read_run(_run_path(shared_data, run))], [other], ties="rank", intent_weights=weights)
    ours = scores[0].per_topic(other)
    assert sum(abs(ours[t] - v) > TOLERANCE for t, v in expected.items()) >= 25


def test_the_reference_gold_has_uniform_weights_over_relevant_intents(shared_data: Path) -> None:
    """Why spec 1.4's renormalisation does not matter here: every aspect of the 2012 gold has a relevant
    document and each topic's weights are 1/(number of subtopics), summing to 1 (the reference implementation
    uses the given weights as they are)."""
    qrels, weights = _gold(shared_data)
    for topic in qrels.topics:
        given = weights.for_topic(topic)
        assert given is not None and sum(given.values()) == pytest.approx(1.0, abs=1e-12)
        assert len(set(given.values())) == 1
    relevant = {(qrels.topic[i], qrels.intent[i]) for i in np.flatnonzero(qrels.grade >= 1)}
    assert relevant == set(zip(qrels.topic.tolist(), qrels.intent.tolist()))


def test_rbu_repository_gold_2014_loads(shared_data: Path, shared_file: Locate) -> None:
    """The RBU repository's 2014 gold reads through the EvALL reader: 43840 judgments on topics 251-300, weights
    1/(number of subtopics), the same judgments as TREC's 2014 qrels.ndeval.txt; its example report (decimal
    commas, run absent) parses to one value per gold topic."""
    qrels, weights = read_evall(shared_file("rbu-sigir18", "qrels.all_EvALL_FORMAT.txt"))
    assert len(qrels) == 43840
    assert qrels.topics == tuple(str(t) for t in range(251, 301))
    for topic in qrels.topics:
        given = weights.for_topic(topic)
        assert given is not None and sum(given.values()) == pytest.approx(1.0, abs=1e-12)
    ndeval = read_qrels(shared_file("trec-web-2009-2014", "2014", "qrels.ndeval.txt"))
    assert (ndeval.topics, ndeval.intents) == (qrels.topics, qrels.intents)
    for column in ("topic", "intent", "doc", "grade"):
        np.testing.assert_array_equal(getattr(ndeval, column), getattr(qrels, column), err_msg=column)
    np.testing.assert_array_equal(ndeval.docnos, qrels.docnos)
    report = read_evall_report(shared_file("rbu-sigir18", "Results.tsv"))
    assert set(report) == set(qrels.topics)
    assert all(-1.0 <= v <= 1.0 for v in report.values())

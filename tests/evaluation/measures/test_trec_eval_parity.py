"""Per-topic parity with trec_eval (through pytrec_eval) on real data.

Inputs: trec_eval's own regression fixtures (TREC topics 301-303) and four real TREC Web 2012 runs against the
official 2012 ad hoc qrels. pytrec_eval gets its usual dicts built by a plain Python parse of the same files;
evalserve reads them with its own readers. Every (case, measure, topic) is a test of its own, so a failure
names the file pair, the measure and the topic. Tolerance: 1e-9 absolute (both sides compute in doubles).
"""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from evaluation.evaluator import RunScores, evaluate
from evaluation.formats import read_qrels, read_run
from evaluation.formats.source import Blob
from evaluation.measures.registry import parse_measure
from evaluation.problems import InputError

pytrec_eval = pytest.importorskip("pytrec_eval")

TOLERANCE = 1e-9

#: our measure (at relevance level 1) -> pytrec_eval's measure key; IPrec with trec_eval 9's rule, pytrec_eval's
#: (``reach=ratio``, the default of ``IPrec``; the name ``iprec_at_recall_r`` gives trec_eval 10.0's rule)
MEASURES: dict[str, str] = {
    "P@5": "P_5",
    "P@10": "P_10",
    "P@20": "P_20",
    "R@100": "recall_100",
    "Rprec": "Rprec",
    "RR": "recip_rank",
    "AP": "map",
    "AP@10": "map_cut_10",
    "nDCG": "ndcg",
    "nDCG@10": "ndcg_cut_10",
    "nDCG@20": "ndcg_cut_20",
    "Bpref": "bpref",
    "Success@1": "success_1",
    "Success@5": "success_5",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
    "SetP": "set_P",
    "SetR": "set_recall",
    "SetF": "set_F",
    "IPrec(recall=0,reach=ratio)": "iprec_at_recall_0.00",
    "IPrec(recall=0.1,reach=ratio)": "iprec_at_recall_0.10",
    "IPrec(recall=0.5,reach=ratio)": "iprec_at_recall_0.50",
    "IPrec(recall=1,reach=ratio)": "iprec_at_recall_1.00",
    "infAP": "infAP",
    "GMAP": "gm_map",
}

#: measures that take trec_eval's -l threshold as ``rel=`` (nDCG uses the grades themselves, never -l)
THRESHOLDED = {"P", "R", "Rprec", "RR", "AP", "Bpref", "Success", "NumRel", "NumRelRet", "SetP", "SetR", "SetF",
               "IPrec", "infAP", "GMAP"}

#: per-topic values that trec_eval keeps in another form: gm_map holds log(max(AP, 1e-5)) per topic
PER_TOPIC_FORM = {"GMAP": lambda v: math.log(max(v, 0.00001))}

WEB_RUNS = (
    "ql-results-cata-filtered.txt",
    "ql-results-cata.txt.gz",
    "ql-results-catb-filtered.txt",
    "ql-results-catb.txt.gz",
)
WEB_TOPICS = tuple(str(t) for t in range(151, 201))


@dataclass(frozen=True)
class Case:
    """One qrels/run pair at one relevance level, with the topics trec_eval evaluates on it (run and qrels)."""

    id: str
    qrels: tuple[str, ...]
    run: tuple[str, ...]
    level: int
    topics: tuple[str, ...]
    six_fields: bool = False  # the run has text after the run tag (feed the engine the first six fields)


#: trec_eval-test/qrels.123 is not a case: it is a multi-assessor qrels_jg file (column 2 = judge group, the same
#: docno judged several times) that trec_eval itself rejects as ad hoc qrels.
CASES = (
    Case("qrels.test|results.test", ("trec_eval-test", "qrels.test"), ("trec_eval-test", "results.test"), 1,
         ("301", "302", "303")),
    Case("qrels.rel_level|results.test|l1", ("trec_eval-test", "qrels.rel_level"),
         ("trec_eval-test", "results.test"), 1, ("301", "302", "303")),
    Case("qrels.rel_level|results.test|l2", ("trec_eval-test", "qrels.rel_level"),
         ("trec_eval-test", "results.test"), 2, ("301", "302", "303")),
    Case("qrels-302.test|results-302.test", ("trec_eval-test", "qrels-302.test"),
         ("trec_eval-test", "results-302.test"), 1, ("302",)),
    # results.trunc has no topic 302 and free text after the run tag on some lines
    Case("qrels.test|results.trunc", ("trec_eval-test", "qrels.test"), ("trec_eval-test", "results.trunc"), 1,
         ("301", "303"), six_fields=True),
    *(
        Case(f"web2012-adhoc|{run}", ("trec-web-2009-2014", "2012", "qrels.adhoc.txt"),
             ("trec-web-2012-runs", "runs", run), 1, WEB_TOPICS)
        for run in WEB_RUNS
    ),
)
CASES_BY_ID = {c.id: c for c in CASES}


def our_name(measure: str, level: int) -> str:
    """The measure with its relevance threshold, e.g. ``P@5`` at level 2 -> ``P(rel=2)@5``."""
    base, _, cutoff = measure.partition("@")
    if level == 1 or base.partition("(")[0] not in THRESHOLDED:
        return measure
    base = f"{base[:-1]},rel={level})" if base.endswith(")") else f"{base}(rel={level})"
    return base + (f"@{cutoff}" if cutoff else "")


# -- plain parses for the oracle ------------------------------------------------------------------------------


def _lines(path: Path) -> list[list[str]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [line.split() for line in handle if line.strip() and not line.startswith("#")]


def oracle_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for qid, _intent, docno, grade, *_ in _lines(path):
        qrels.setdefault(qid, {})[docno] = int(grade)
    return qrels


def oracle_run(path: Path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for qid, _q0, docno, _rank, score, *_ in _lines(path):
        run.setdefault(qid, {})[docno] = float(score)
    return run


# -- both sides, computed once per case -----------------------------------------------------------------------


@cache
def oracle_scores(root: Path, case_id: str) -> dict[str, dict[str, float]]:
    case = CASES_BY_ID[case_id]
    evaluator = pytrec_eval.RelevanceEvaluator(
        oracle_qrels(root.joinpath(*case.qrels)), set(MEASURES.values()), relevance_level=case.level
    )
    return evaluator.evaluate(oracle_run(root.joinpath(*case.run)))


@cache
def engine_scores(root: Path, case_id: str) -> RunScores:
    case = CASES_BY_ID[case_id]
    run_path = root.joinpath(*case.run)
    if case.six_fields:
        trimmed = "".join(" ".join(fields[:6]) + "\n" for fields in _lines(run_path))
        run = read_run(Blob.from_bytes(trimmed.encode(), name=run_path.name))
    else:
        run = read_run(run_path)
    names = [our_name(m, case.level) for m in MEASURES]
    return evaluate(read_qrels(root.joinpath(*case.qrels)), [run], names, ties="trec", topics="common")[0]


# -- tests ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("case_id", [c.id for c in CASES])
def test_same_topics(shared_data: Path, shared_file, case_id: str) -> None:
    """Both tools evaluate exactly the topics in both run and qrels."""
    case = CASES_BY_ID[case_id]
    shared_file(*case.qrels)
    shared_file(*case.run)
    assert set(oracle_scores(shared_data, case_id)) == set(case.topics)
    assert engine_scores(shared_data, case_id).topics == case.topics


PARAMS = [
    pytest.param(case.id, measure, topic, id=f"{case.id}|{our_name(measure, case.level)}|{topic}")
    for case in CASES
    for measure in MEASURES
    for topic in case.topics
]


@pytest.mark.parametrize(("case_id", "measure", "topic"), PARAMS)
def test_per_topic_parity(shared_data: Path, shared_file, case_id: str, measure: str, topic: str) -> None:
    case = CASES_BY_ID[case_id]
    shared_file(*case.qrels)
    shared_file(*case.run)
    expected = oracle_scores(shared_data, case_id)[topic][MEASURES[measure]]
    name = our_name(measure, case.level)
    got = engine_scores(shared_data, case_id).per_topic(parse_measure(name).name)[topic]
    got = PER_TOPIC_FORM.get(measure, lambda v: v)(got)
    assert got == pytest.approx(expected, abs=TOLERANCE, rel=0), (
        f"{case.id} {name} topic {topic}: evalserve {got!r}, trec_eval {expected!r}"
    )


def test_results_trunc_is_readable_as_trec_eval_reads_it(shared_file) -> None:
    """trec_eval ignores any text after the run tag ("Any field following run_id is ignored",
    get_trec_results.c); its own fixture results.trunc relies on that (out.test.aqc is produced from it)."""
    path = shared_file("trec_eval-test", "results.trunc")
    try:
        run = read_run(path)
    except InputError as exc:
        pytest.xfail(f"ENGINE BUG (evaluation/formats/trec_run.py): results.trunc rejected: {exc}")
    assert len(run) == sum(1 for _ in _lines(path))

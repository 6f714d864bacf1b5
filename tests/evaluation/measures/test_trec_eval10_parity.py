"""Per-topic parity with the real trec_eval 10.0 (built by the ``oracles`` fixture) on every measure it prints.

trec_eval runs with ``-q -m all_trec`` (and ``-l``, ``-c``, ``-N`` and parameterised ``-m name.params``) on its own
fixtures, four real TREC Web 2012 runs and seeded random runs (ties, unjudged documents, negative and large grades
within what trec_eval accepts: no topic judged only negatively, grades far below 2^20, every run topic in the
qrels). Each measure it prints is requested from evalserve by the very label trec_eval printed (``rbp``,
``iprec_at_recall_0.10``, ``utility_2,-1,0,0``, ...), and every (measure, topic) value is compared as printed:
``%.4f`` (``%ld`` for counts), byte for byte; ``all`` lines (means) to 5e-5, their summation order being the
report's business. ``trec_eval_label`` must give back the printed label. ``relstring`` (a string, not a measure) is
compared with ``run_relstrings``. Not exercised: rbp after G, ndcg, iprec_at_recall... without all_trec (trec_eval
reads uninitialised variables there, docs/measures.md), gain maps on dcg/ideal_dcg/ndcg together (it aborts).
"""

from __future__ import annotations

import gzip
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from evaluation.evaluator import RunScores, evaluate
from evaluation.formats import read_qrels, read_run
from evaluation.measures.adhoc._shared import REL
from evaluation.measures.adhoc.relstring import run_relstrings
from evaluation.measures.base import Measure
from evaluation.measures.names import TREC_EVAL_FAMILIES, trec_eval_label
from evaluation.measures.registry import parse_measure
from evaluation.problems import MeasureError

TOLERANCE = 5e-5 + 1e-12
#: lines trec_eval prints that are not measures of one number per topic (relstring: compared on its own)
NOT_MEASURES = {"runid", "num_q", "relstring", "relstring_20"}

#: parameterised measures, spelled as ``-m`` takes them (and as evalserve prints them back)
PARAMETERISED = (
    "-m", "rbp.p=0.5", "-m", "rbp_resid.p=0.8", "-m", "set_F.0.5", "-m", "set_F.2", "-m", "utility.2,-1,0,0",
    "-m", "utility.1,-2,-0.5,0.25", "-m", "11pt_avg.0.25,0.5,0.75", "-m", "Rprec_mult.5.0,0.2,0.35",
    "-m", "iprec_at_recall.0.1,0.25,0.33,0.5,0.75", "-m", "relative_P.3,7,2000", "-m", "unj.3,50",
    "-m", "map", "-m", "P.1,3", "-m", "ndcg.1=3,2=9,4=4.5", "-m", "G.0=1,2=5", "-m", "ndcg_rel.1=2,3=7",
    "-m", "Rndcg.2=1,3=5",
)
#: dcg, ideal_dcg and ndcg share one parameter block in trec_eval 10.0 (m_ndcg.c): given together with gain maps
#: it aborts ("double free") or prints nothing, so they are run apart
DCG_PLAIN = ("-m", "dcg", "-m", "ideal_dcg", "-m", "ndcg", "-m", "yaap")
DCG_GAINS = ("-m", "dcg.2=5,3=1,4=0")


@dataclass(frozen=True)
class Case:
    """trec_eval's options on one qrels/run pair (shared files, or a seeded random pair)."""

    id: str
    flags: tuple[str, ...]
    qrels: tuple[str, ...] = ()
    run: tuple[str, ...] = ()
    seed: int = 0


TE = "trec_eval-test"
WEB_RUNS = ("ql-results-cata-filtered.txt", "ql-results-catb-filtered.txt", "ql-results-cata.txt.gz",
            "ql-results-catb.txt.gz")
CASES = (
    Case("aq", ("-m", "all_trec"), (TE, "qrels.test"), (TE, "results.test")),
    Case("aq-rel_level", ("-m", "all_trec"), (TE, "qrels.rel_level"), (TE, "results.test")),
    Case("aql2-rel_level", ("-m", "all_trec", "-l2", "-m", "relstring.20"), (TE, "qrels.rel_level"),
         (TE, "results.test")),
    Case("aqc-trunc", ("-m", "all_trec", "-c"), (TE, "qrels.test"), (TE, "results.trunc")),
    Case("aq-302", ("-m", "all_trec"), (TE, "qrels-302.test"), (TE, "results-302.test")),
    Case("params-rel_level", (*PARAMETERISED, "-N", "5000"), (TE, "qrels.rel_level"), (TE, "results.test")),
    *(
        Case(f"web2012-{run}", ("-m", "all_trec"), ("trec-web-2009-2014", "2012", "qrels.adhoc.txt"),
             ("trec-web-2012-runs", "runs", run))
        for run in WEB_RUNS
    ),
    Case("web2012-params", PARAMETERISED, ("trec-web-2009-2014", "2012", "qrels.adhoc.txt"),
         ("trec-web-2012-runs", "runs", WEB_RUNS[0])),
    Case("random-1", ("-m", "all_trec", "-m", "relstring.20"), seed=1),
    Case("random-2-l2", ("-m", "all_trec", "-l2"), seed=2),
    Case("random-3-c", ("-m", "all_trec", "-c"), seed=3),
    Case("random-4-l3-c", ("-m", "all_trec", "-l3", "-c"), seed=4),
    Case("random-5-params", (*PARAMETERISED, "-N", "300"), seed=5),
    Case("random-6-params-l2", (*PARAMETERISED, "-l2"), seed=6),
    Case("dcg-rel_level", DCG_PLAIN, (TE, "qrels.rel_level"), (TE, "results.test")),
    Case("dcg-gains-rel_level", DCG_GAINS, (TE, "qrels.rel_level"), (TE, "results.test")),
    Case("random-7-dcg", DCG_PLAIN, seed=7),
    Case("random-8-dcg-gains", DCG_GAINS, seed=8),
    Case("random-9-dcg-l2-c", (*DCG_PLAIN, "-l2", "-c"), seed=9),
)


def random_pair(seed: int, missing: bool) -> tuple[str, str]:
    """A qrels and a run: grades -2..12 (each topic has a grade >= 0), tied scores, unjudged documents, topics
    without relevant documents; with ``missing`` (for -c) two qrels topics have no results."""
    rng = np.random.default_rng(seed)
    grades = np.array([-2, -1, 0, 0, 0, 0, 1, 1, 1, 2, 2, 3, 4, 7, 12])
    qrels, run = [], []
    for t in range(12):
        topic = str(100 + t)
        pool = [f"doc{rng.integers(0, 10 ** int(rng.integers(1, 4)))}-{j}" for j in range(60)]
        judged = rng.choice(60, size=int(rng.integers(1, 40)), replace=False)
        scale = grades if t % 5 else grades[grades <= 0]  # every fifth topic: nothing relevant
        given = rng.choice(scale, size=judged.size)
        if (given < 0).all():
            given[0] = 0
        qrels += [f"{topic} 0 {pool[j]} {g}\n" for j, g in zip(judged, given)]
        if missing and t in (3, 11):
            continue
        depth = int(rng.integers(1, 60))
        for rank, j in enumerate(rng.choice(60, size=depth, replace=False), 1):
            score = rng.integers(0, 8) / 4
            run.append(f"{topic} Q0 {pool[j]} {rank} {score} random\n")
    return "".join(qrels), "".join(run)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("te10")


def materialise(case: Case, shared_file, workdir: Path) -> tuple[Path, Path, Path]:  # type: ignore[no-untyped-def]
    """(qrels, run as trec_eval reads it, run as six fields for evalserve), as plain files."""
    if case.seed:
        qrels_text, run_text = random_pair(case.seed, "-c" in case.flags)
    else:
        qrels_text = _text(shared_file(*case.qrels))
        run_text = _text(shared_file(*case.run))
    qrels, raw, six = (workdir / f"{case.id}.{kind}" for kind in ("qrels", "run", "run6"))
    qrels.write_text(qrels_text)
    raw.write_text(run_text)
    six.write_text("".join(" ".join(line.split()[:6]) + "\n" for line in run_text.splitlines() if line.strip()))
    return qrels, raw, six


def _text(path: Path) -> str:
    return gzip.open(path, "rt").read() if path.name.endswith(".gz") else path.read_text()


def oracle_lines(trec_eval: Path, case: Case, qrels: Path, run: Path) -> list[tuple[str, str, str]]:
    done = subprocess.run([str(trec_eval), "-q", *case.flags, str(qrels), str(run)], capture_output=True,
                          text=True, timeout=60, check=True)
    return [tuple(line.split("\t")) for line in done.stdout.splitlines()]  # type: ignore[misc]


def option(flags: tuple[str, ...], name: str) -> str | None:
    """The value of a trec_eval option given as ``-l2`` or ``-l 2``."""
    for i, flag in enumerate(flags):
        if flag == name:
            return flags[i + 1]
        if flag.startswith(name) and flag[len(name):].isdigit():
            return flag[len(name):]
    return None


def our_measure(label: str, level: int, docs: int) -> Measure:
    """The measure trec_eval printed as ``label``, with trec_eval's -l (as rel=) and -N (Utility's docs)."""
    measure = parse_measure(label)
    values = dict(measure.params)
    if measure.definition.param("rel") == REL:
        values["rel"] = level
    if measure.definition.name == "Utility":
        values["docs"] = docs
    return measure.definition.instance(values, measure.cutoff).labelled(label)


def ours(case: Case, labels: list[str], qrels: Path, run: Path) -> tuple[RunScores, dict[str, Measure]]:
    level = int(option(case.flags, "-l") or 1)
    docs = int(option(case.flags, "-N") or 0)
    measures = {label: our_measure(label, level, docs) for label in labels}
    topics = "complete" if "-c" in case.flags else "common"
    scores = evaluate(read_qrels(qrels), [read_run(run)], list(measures.values()), ties="trec", topics=topics)[0]
    return scores, measures


def printed(value: float, how: str) -> str:
    return f"{round(value)}" if how == "sum" else f"{value:.4f}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_every_value_as_trec_eval_prints_it(oracles, shared_file, workdir: Path, case: Case) -> None:  # type: ignore[no-untyped-def]
    qrels, raw, six = materialise(case, shared_file, workdir)
    lines = oracle_lines(oracles.trec_eval, case, qrels, raw)
    labels = list(dict.fromkeys(label.strip() for label, _t, _v in lines if label.strip() not in NOT_MEASURES))
    scores, measures = ours(case, labels, qrels, six)
    failures, compared = [], 0
    for label, topic, value in lines:
        label = label.strip()
        if label in NOT_MEASURES:
            continue
        how = measures[label].definition.aggregate
        if topic == "all" and label == "num_rel" and "-c" in case.flags and option(case.flags, "-l"):
            continue  # trec_eval -c counts grades > 0 of every qrels topic there, whatever -l says (m_num_rel.c)
        if topic == "all":
            got = scores.mean(label)
            exact = how == "sum"
            wrong = printed(got, how) != value if exact else abs(got - float(value)) > TOLERANCE
        else:
            got = scores.per_topic(label)[topic]
            wrong = printed(got, how) != value
        compared += 1
        if wrong:
            failures.append(f"{label} ({measures[label].name}) topic {topic}: evalserve {got!r}, trec_eval {value}")
    failures += relstring_failures(case, lines, qrels, six)
    assert not failures, f"{case.id}: {len(failures)} of {compared} values differ:\n" + "\n".join(failures[:60])
    assert compared >= 4
    unlabelled = {label: trec_eval_label(m.name) for label, m in measures.items() if trec_eval_label(m.name) != label}
    assert not unlabelled, f"trec_eval_label does not give trec_eval's label back: {unlabelled}"


def relstring_failures(case: Case, lines: list[tuple[str, str, str]], qrels: Path, run: Path) -> list[str]:
    """trec_eval's relstring lines (``'0011-.'``) against ``run_relstrings``."""
    failures = []
    topics = "complete" if "-c" in case.flags else "common"
    for name, depth in (("relstring", 10), ("relstring_20", 20)):
        expected = {topic: value for label, topic, value in lines if label.strip() == name}
        if expected:
            got = run_relstrings(read_qrels(qrels), read_run(run), depth, topics=topics)
            failures += [f"{name} topic {t}: evalserve '{got.get(t)}', trec_eval {v}"
                         for t, v in expected.items() if f"'{got.get(t)}'" != v]
    return failures


def test_all_trec_is_covered(oracles, shared_file, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    """Every label of ``-q -m all_trec`` is a measure evalserve knows, and gives back that label."""
    case = CASES[0]
    qrels, raw, _six = materialise(case, shared_file, workdir)
    labels = {label.strip() for label, _t, _v in oracle_lines(oracles.trec_eval, case, qrels, raw)} - NOT_MEASURES
    assert len(labels) > 90
    assert {label for label in labels if trec_eval_label(parse_measure(label).name) != label} == set()


def test_bare_family_names_stand_for_trec_eval_defaults(oracles, shared_file, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    """``-m P`` prints P_5 ... P_1000: TREC_EVAL_FAMILIES lists what each bare family name prints."""
    flags = tuple(part for family in TREC_EVAL_FAMILIES for part in ("-m", family))
    case = Case("families", flags, (TE, "qrels.test"), (TE, "results.test"))
    qrels, raw, _six = materialise(case, shared_file, workdir)
    lines = oracle_lines(oracles.trec_eval, case, qrels, raw)
    printed_labels = {label.strip() for label, topic, _v in lines if topic == "all"}
    assert printed_labels == {label for labels in TREC_EVAL_FAMILIES.values() for label in labels}
    assert all(trec_eval_label(parse_measure(label).name) == label for label in printed_labels)


@pytest.mark.parametrize(("spelling", "canonical"), [
    ("rbp", "RBP(p=0.9,rel=graded_topic)"), ("rbp.p=0.95", "RBP(p=0.95,rel=graded_topic)"),
    ("rbp_resid", "RBPResid"), ("iprec_at_recall_0.10", "IPrec(recall=0.1,reach=rounded)"),
    ("iprec_at_recall..25", "IPrec(recall=0.25,reach=rounded)"), ("Rprec_mult_0.20", "RprecMult(mult=0.2)"),
    ("set_F.0.25", "SetF(beta=0.5)"), ("set_F_0.25", "SetF(beta=0.5)"), ("utility.2,-1,0,0", "Utility(a=2)"),
    ("11pt_avg.0.2,0.5,0.8", "IPrecAvg(levels=0.2:0.5:0.8)"), ("ndcg.1=3,2=9,4=4.5", "nDCG(gains=0:3:9:3:4.5)"),
    ("ndcg_cut.23.4", "nDCG@23"), ("unj.50", "Unjudged@50"), ("relative_P_5", "RelativeP@5"), ("G", "G"),
    ("binG", "BinG"), ("gm_bpref", "GMBpref"), ("num_nonrel_judged_ret", "NumNonrelJudgedRet"), ("dcg", "DCG"),
])
def test_trec_eval_spellings(spelling: str, canonical: str) -> None:
    assert parse_measure(spelling).name == canonical


@pytest.mark.parametrize("spelling", ["utility.1,2", "set_F.0", "rbp.p=2", "11pt_avg.x", "ndcg.1=-3"])
def test_bad_trec_eval_parameters_are_refused(spelling: str) -> None:
    with pytest.raises(MeasureError):
        parse_measure(spelling)


def test_ir_measures_names_keep_their_numbers() -> None:
    """RBP is ir_measures' (p = 0.8, binary) and IPrec trec_eval 9's: no trec_eval 10.0 label claims them."""
    assert trec_eval_label(parse_measure("RBP").name) is None
    assert trec_eval_label(parse_measure("RBP(p=0.9)").name) is None
    assert trec_eval_label(parse_measure("IPrec(recall=0.1)").name) is None
    assert trec_eval_label(parse_measure("IPrec(recall=0.1,rel=2,reach=rounded)").name) == "iprec_at_recall_0.10"

"""trec_eval's own expected outputs (test/out.test.*), reproduced to the 4 printed decimals.

The commands that produced them (trec_eval-test/quicktest-commands.txt):
  out.test.aq           trec_eval -m all_trec -q            qrels.test      results.test
  out.test.aqc          trec_eval -m all_trec -q -c         qrels.test      results.trunc   (-c = topics="complete")
  out.test.aql          trec_eval -m all_trec -q -l2        qrels.rel_level results.test    (-l2 = rel=2)
  out.test.meas_params  trec_eval -q -m P.5,7,3 -m recall.20,2000 -m ndcg_cut.10,20,23.4 -m success.2,5,20 ...
Every line whose measure we implement (all but relstring) is checked, per topic and for the
``all`` mean:
|ours - printed| <= 5e-5 (+1e-12 for the binary representation of the printed value).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

from evaluation.evaluator import RunScores, evaluate
from evaluation.formats import read_qrels, read_run
from evaluation.formats.source import Blob
from evaluation.measures.registry import parse_measure
from evaluation.model import Run

TOLERANCE = 5e-5 + 1e-12
DATA = "trec_eval-test"


@dataclass(frozen=True)
class Golden:
    """One expected-output file and the inputs and options trec_eval was run with."""

    qrels: str
    run: str
    topics: str  # our topics policy (trec_eval -c -> complete)
    level: int  # trec_eval -l
    negative_grades: bool  # the qrels have grades < 0 (trec_eval: in the pool but unjudged)


GOLDEN: dict[str, Golden] = {
    "out.test.aq": Golden("qrels.test", "results.test", "common", 1, False),
    "out.test.aqc": Golden("qrels.test", "results.trunc", "complete", 1, False),
    "out.test.aql": Golden("qrels.rel_level", "results.test", "common", 2, True),
    "out.test.meas_params": Golden("qrels.test", "results.test", "common", 1, False),
}


@dataclass(frozen=True)
class Row:
    """trec_eval name (regex; groups fill ``ours``) -> our measure; ``level`` = takes -l as ``rel=``."""

    trec: str
    ours: str
    level: bool = True
    transform: Callable[[float], float] = lambda v: v
    applies: Callable[[Golden], bool] = lambda golden: True
    why_not: str = ""  # when ``applies`` is false: why the line is not comparable


#: trec_eval measure names -> ours. Kept as data: extend it when a measure is added.
TABLE: tuple[Row, ...] = (
    Row(r"map", "AP"),
    Row(r"map_cut_(\d+)", "AP@{0}"),
    Row(r"P_(\d+)", "P@{0}"),
    Row(r"recall_(\d+)", "R@{0}"),
    Row(r"Rprec", "Rprec"),
    Row(r"Rprec_mult_(\d\.\d\d)", "RprecMult(mult={0})"),
    Row(r"recip_rank", "RR"),
    Row(r"bpref", "Bpref"),
    Row(r"success_(\d+)", "Success@{0}"),
    Row(r"ndcg", "nDCG", level=False),  # gains = grades; trec_eval's -l does not apply
    Row(r"ndcg_cut_(\d+)", "nDCG@{0}", level=False),
    Row(r"(ndcg_\d+=.*)", "{0}", level=False),  # a gain map, ndcg_1=3,2=9,4=4.5: read as trec_eval spells it
    # trec_eval 10.0 rbp: p = 0.9, gain = grade / the topic's highest grade; -l does not apply
    Row(r"rbp", "RBP(p=0.9,rel=graded_topic)", level=False),
    Row(r"rbp_resid", "RBPResid", level=False),
    Row(r"num_ret", "NumRet", level=False),
    Row(r"num_rel", "NumRel"),
    Row(r"num_rel_ret", "NumRelRet"),
    Row(r"set_P", "SetP"),
    Row(r"set_recall", "SetR"),
    Row(r"set_F", "SetF"),
    # the current trec_eval counts recall r as reached at relevant document round(r*R); 9.0.7 at C/R >= r
    Row(r"iprec_at_recall_(\d\.\d\d)", "IPrec(recall={0},reach=rounded)"),
    Row(r"infAP", "infAP"),
    Row(r"gm_map", "GMAP"),  # printed for "all" only: the geometric mean (values floored at 1e-5)
    Row(r"unj_(\d+)", "Unjudged@{0}", level=False),
    Row(r"gm_bpref", "GMBpref"),
    Row(r"utility", "Utility"),
    Row(r"utility_2,-1,0,0", "Utility(a=2)"),
    Row(r"11pt_avg", "IPrecAvg"),
    Row(r"11pt_avg_\.25,\.5,\.75", "IPrecAvg(levels=.25:.5:.75)"),
    Row(r"binG", "BinG"),
    Row(r"G", "G", level=False),
    Row(r"ndcg_rel", "nDCGRel", level=False),
    Row(r"Rndcg", "RnDCG"),
    Row(r"relative_P_(\d+)", "RelativeP@{0}"),
    Row(r"set_relative_P", "SetRelativeP"),
    Row(r"set_map", "SetMAP"),
    Row(r"num_nonrel_judged_ret", "NumNonrelJudgedRet"),
)

#: trec_eval measures evalserve does not implement (checked so that the table above stays complete).
NOT_IMPLEMENTED = re.compile(r"runid|num_q|relstring(_\d+)?")  # relstring: a string, not a measure


def match_row(name: str) -> tuple[Row, str] | None:
    """The table row for a trec_eval measure name and our measure name for it (without -l)."""
    for row in TABLE:
        m = re.fullmatch(row.trec, name)
        if m:
            return row, row.ours.format(*m.groups())
    return None


def with_level(ours: str, row: Row, level: int) -> str:
    if not row.level or level == 1:
        return ours
    base, _, cutoff = ours.partition("@")
    base = f"{base[:-1]},rel={level})" if base.endswith(")") else f"{base}(rel={level})"
    return base + (f"@{cutoff}" if cutoff else "")


def read_golden(path: Path) -> list[tuple[str, str, str]]:
    """(measure, topic, printed value) for every line."""
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            measure, topic, value = line.split()
            out.append((measure, topic, value))
    return out


def _run(path: Path) -> Run:
    # trec_eval ignores everything after the run tag (results.trunc has free text there); keep six fields so
    # this test checks the measures whatever the reader does (the reader is checked in test_trec_eval_parity).
    lines = [line.split()[:6] for line in path.read_text().splitlines() if line.strip()]
    return read_run(Blob.from_bytes("".join(" ".join(f) + "\n" for f in lines).encode(), name=path.name))


@cache
def expected_lines(root: Path, file: str) -> list[tuple[str, str, str]]:
    return read_golden(root / DATA / file)


@cache
def ours(root: Path, file: str) -> RunScores:
    golden = GOLDEN[file]
    names = set()
    for measure, _topic, _value in expected_lines(root, file):
        found = match_row(measure)
        if found and found[0].applies(golden):
            names.add(with_level(found[1], found[0], golden.level))
    qrels = read_qrels(root / DATA / golden.qrels)
    return evaluate(qrels, [_run(root / DATA / golden.run)], sorted(names), ties="trec", topics=golden.topics)[0]


@pytest.fixture
def golden_dir(shared_file) -> Path:
    return shared_file(DATA)


@pytest.mark.parametrize("file", sorted(GOLDEN))
def test_table_covers_every_measure(golden_dir: Path, file: str) -> None:
    """Each measure in the expected output is either mapped above or known not to be implemented."""
    unknown = sorted(
        {m for m, _, _ in read_golden(golden_dir / file) if not match_row(m) and not NOT_IMPLEMENTED.fullmatch(m)}
    )
    assert not unknown, f"{file}: add these trec_eval measures to TABLE or NOT_IMPLEMENTED: {unknown}"


#: lines compared per file (a floor, so that a parsing slip cannot silently compare nothing)
MIN_COMPARED = {"out.test.aq": 382, "out.test.aqc": 382, "out.test.aql": 382, "out.test.meas_params": 88}


@pytest.mark.parametrize("file", sorted(GOLDEN))
def test_golden_values(golden_dir: Path, file: str) -> None:
    """Every comparable line: per topic and the ``all`` mean."""
    root = golden_dir.parent
    golden = GOLDEN[file]
    scores = ours(root, file)
    failures, compared = [], 0
    for measure, topic, printed in expected_lines(root, file):
        found = match_row(measure)
        if found is None or not found[0].applies(golden):
            continue
        row = found[0]
        name = parse_measure(with_level(found[1], row, golden.level)).name
        got = row.transform(scores.mean(name) if topic == "all" else scores.per_topic(name)[topic])
        compared += 1
        if abs(got - float(printed)) > TOLERANCE:
            failures.append(f"{measure} ({name}) topic {topic}: evalserve {got:.6f}, trec_eval printed {printed}")
    assert not failures, f"{file}: {len(failures)} of {compared} lines differ:\n" + "\n".join(failures)
    assert compared >= MIN_COMPARED[file]


@pytest.mark.parametrize("file", sorted(GOLDEN))
def test_golden_topics(golden_dir: Path, file: str) -> None:
    """We evaluate exactly the topics trec_eval printed (-c adds the judged topic missing from the run)."""
    printed = {topic for _, topic, _ in read_golden(golden_dir / file)} - {"all"}
    assert set(ours(golden_dir.parent, file).topics) == printed

"""The spec's numeric test vectors for the ad hoc measures (spec 2.8 TV-NCU-1, spec 3 TV-DIV-1 ad hoc part) and the
NCU identities of spec 2.8 / 9.4. Inputs are built in memory; tolerance 1e-6 (spec 9) unless a value is printed
rounded to 4 decimals in the spec's tables (then 5e-5).
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from evaluation.evaluator import evaluate
from evaluation.formats import read_qrels, read_run
from evaluation.formats.source import Blob
from evaluation.measures.registry import parse_measure

EXACT = 1e-6
ROUNDED = 5e-5 + 1e-12


def score(qrels: str, run: str, measures: list[str], **options: str) -> dict[str, dict[str, float]]:
    """Per-topic values of each measure (keyed by the name as given)."""
    q = read_qrels(Blob.from_bytes(qrels.encode(), name="qrels"))
    r = read_run(Blob.from_bytes(run.encode(), name="run"))
    result = evaluate(q, [r], measures, **options)[0]
    return {m: result.per_topic(parse_measure(m).name) for m in measures}


def run_text(docs: list[str], topic: str = "q1") -> str:
    """A run that ranks ``docs`` in the given order under every tie policy (strictly decreasing scores)."""
    return "".join(f"{topic} Q0 {d} {i} {1000 - i} tv\n" for i, d in enumerate(docs, start=1))


# -- TV-NCU-1 (spec 2.8; Sakai & Robertson 2008 Tables 1-2) ---------------------------------------------------

#: rank -> grade (S = 3, A = 2, B = 1) of the relevant documents in the 15-document ranked list
NCU_HITS = {2: 3, 5: 2, 8: 3, 12: 1, 15: 2}
#: the 5 relevant documents that are not retrieved: R(S) = 3, R(A) = 3, R(B) = 4 in all
NCU_MISSED = (3, 2, 1, 1, 1)


def ncu_qrels() -> str:
    lines = [f"q1 0 r{i:02d} {NCU_HITS.get(i, 0)}" for i in range(1, 16)]
    lines += [f"q1 0 u{j} {g}" for j, g in enumerate(NCU_MISSED)]
    return "".join(line + "\n" for line in lines)


def ncu_run(depth: int = 15) -> str:
    return run_text([f"r{i:02d}" for i in range(1, depth + 1)])


NCU_VALUES = {
    # Table 2 (exact values as given) and the [DERIVED] column/rows
    "NCU(stop=u,beta=0)": 0.194167,
    "NCU(stop=u,beta=1)": 0.221883,
    "NCU(stop=u,beta=10000)": 0.240780,
    "NCU(stop=rb,beta=0)": 0.357534,
    "NCU(stop=rb,beta=1)": 0.384249,
    "NCU(stop=rb,beta=10000)": 0.401735,
    "NCU(stop=gu,beta=0)": 0.232895,
    "NCU(stop=gu,beta=1)": 0.260964,
    "NCU(stop=gu,beta=10000)": 0.279606,
    "NCU(stop=rb,beta=0,gamma=0.9)": 0.249562,
    "NCU(stop=rb,beta=1,gamma=0.9)": 0.279564,
    "NCU(stop=rb,beta=0,gamma=0.5)": 0.428543,
    "NCU(stop=rb,beta=1,gamma=0.5)": 0.443571,
    "NCU(stop=gu,beta=1,gain=1:2:3,stopw=1:2:3)": 0.260964,  # the defaults spelled out
    "AP": 0.194167,
    "Q": 0.221883,
    "Q(beta=1)@10": 0.132889,
    "RR": 0.5,
    "NCU(stop=first,beta=0)": 0.5,
}

#: Table 2 as printed (4 decimals)
NCU_PRINTED = {
    "NCU(stop=u,beta=0)": 0.1942,
    "NCU(stop=u,beta=1)": 0.2219,
    "NCU(stop=rb,beta=0)": 0.3575,
    "NCU(stop=rb,beta=1)": 0.3842,
    "NCU(stop=gu,beta=0)": 0.2329,
    "NCU(stop=gu,beta=1)": 0.2610,
}


@pytest.mark.parametrize(("measure", "expected"), NCU_VALUES.items())
def test_tv_ncu_1(measure: str, expected: float) -> None:
    got = score(ncu_qrels(), ncu_run(), [measure])[measure]["q1"]
    assert got == pytest.approx(expected, abs=EXACT, rel=0)


@pytest.mark.parametrize(("measure", "expected"), NCU_PRINTED.items())
def test_tv_ncu_1_table_2_as_printed(measure: str, expected: float) -> None:
    got = score(ncu_qrels(), ncu_run(), [measure])[measure]["q1"]
    assert got == pytest.approx(expected, abs=ROUNDED, rel=0)


# Table 1, per relevant rank n: level, p_u, p_rb (gamma = 0.7), p_gu (1:2:3), BR(n) at beta = 0 and beta = 1.
GEOMETRIC_MASS = sum(Fraction(7, 10) ** i for i in range(10))  # sum_{i=1}^{10} 0.7^(i-1) = 3.239175
TABLE_1 = {
    # n: (p_u, p_rb exact, p_rb printed, p_gu, BR beta=0, BR beta=1, BR beta=1 printed)
    2: (Fraction(1, 10), 1 / GEOMETRIC_MASS, 0.3087, Fraction(3, 19), Fraction(1, 2), Fraction(1 + 3, 2 + 6), 0.5000),
    5: (Fraction(1, 10), Fraction(7, 10) / GEOMETRIC_MASS, 0.2161, Fraction(2, 19), Fraction(2, 5),
        Fraction(2 + 5, 5 + 13), 0.3889),
    8: (Fraction(1, 10), Fraction(49, 100) / GEOMETRIC_MASS, 0.1513, Fraction(3, 19), Fraction(3, 8),
        Fraction(3 + 8, 8 + 17), 0.4400),
    12: (Fraction(1, 10), Fraction(343, 1000) / GEOMETRIC_MASS, 0.1059, Fraction(1, 19), Fraction(4, 12),
         Fraction(4 + 9, 12 + 19), 0.4194),
    15: (Fraction(1, 10), Fraction(2401, 10000) / GEOMETRIC_MASS, 0.0741, Fraction(2, 19), Fraction(5, 15),
         Fraction(5 + 11, 15 + 19), 0.4706),
}


def test_geometric_mass_as_printed() -> None:
    assert float(GEOMETRIC_MASS) == pytest.approx(3.239175, abs=EXACT)


def contribution(measure: str, n: int) -> float:
    """p_s(n) * BR(n): what the relevant document at rank n adds (the run cut after n minus the run cut before).

    Stopping probabilities depend on R, the level and C(n) only, never on the run's length, so differences of NCU
    on truncated runs isolate one rank's term.
    """
    before = max((m for m in TABLE_1 if m < n), default=0)
    cut = score(ncu_qrels(), ncu_run(n), [measure])[measure]["q1"]
    prev = score(ncu_qrels(), ncu_run(before), [measure])[measure]["q1"] if before else 0.0
    return cut - prev


@pytest.mark.parametrize("n", sorted(TABLE_1))
def test_tv_ncu_1_table_1(n: int) -> None:
    p_u, p_rb, p_rb_printed, p_gu, br0, br1, br1_printed = TABLE_1[n]
    # BR(n) from the uniform user (p_u = 1/R = 0.1 is known): beta = 0 is precision, beta = 1 blends in cg/cg*
    assert contribution("NCU(stop=u,beta=0)", n) / float(p_u) == pytest.approx(float(br0), abs=EXACT)
    assert contribution("NCU(stop=u,beta=1)", n) / float(p_u) == pytest.approx(float(br1), abs=EXACT)
    assert float(br1) == pytest.approx(br1_printed, abs=ROUNDED)
    # stopping probabilities from the BR(n; beta=0) = C(n)/n column
    got_rb = contribution("NCU(stop=rb,beta=0)", n) / float(br0)
    got_gu = contribution("NCU(stop=gu,beta=0)", n) / float(br0)
    assert got_rb == pytest.approx(float(p_rb), abs=EXACT)
    assert got_rb == pytest.approx(p_rb_printed, abs=ROUNDED)
    assert got_gu == pytest.approx(float(p_gu), abs=EXACT)


# -- TV-DIV-1, ad hoc part (spec 3, topic-level view g = max over intents) ------------------------------------

#: per-intent qrels ``qid intent docno grade``; dD is judged non-relevant for every intent, dX is unjudged
DIV_QRELS = """\
q1 t1 dA 2
q1 t1 dB 1
q1 t2 dB 1
q1 t3 dC 1
q1 t1 dD 0
q1 t2 dD 0
q1 t3 dD 0
q1 t2 dE 2
q1 t1 dF 1
q1 t3 dG 2
"""
DIV_RUN = ["dB", "dD", "dA", "dF", "dC", "dX"]

DIV_VALUES = {
    "P@5": 0.8,
    "P@10": 0.4,
    "RR": 1.0,
    "AP": 0.536111,
    "nDCG(gain=lin)@5": 0.554698,
    "nDCG(gain=exp)@5": 0.460109,
    "nDCG(gain=lin)@10": 0.518348,
    "ERR(gmax=2)@5": 0.456250,
    "RBP(p=0.8)": 0.512320,
    "RBP(p=0.8,rel=graded)": 0.320160,
    "Q(beta=1)": 0.425149,
    "Q(beta=1)@5": 0.510179,
}


@pytest.mark.parametrize(("measure", "expected"), DIV_VALUES.items())
def test_tv_div_1_adhoc(measure: str, expected: float) -> None:
    got = score(DIV_QRELS, run_text(DIV_RUN), [measure])[measure]["q1"]
    assert got == pytest.approx(expected, abs=EXACT, rel=0)


def test_tv_div_1_single_aspect_view_equals_max_grade_qrels() -> None:
    """The multi-intent qrels behave exactly like ad hoc qrels holding each document's maximum grade."""
    flat = "".join(f"q1 0 {d} {g}\n" for d, g in {"dA": 2, "dB": 1, "dC": 1, "dD": 0, "dE": 2, "dF": 1,
                                                   "dG": 2}.items())
    measures = list(DIV_VALUES)
    assert score(DIV_QRELS, run_text(DIV_RUN), measures) == score(flat, run_text(DIV_RUN), measures)


# -- NCU identities (spec 2.8 and 9.4) ------------------------------------------------------------------------

IDENTITIES = [
    ("NCU(stop=u,beta=0)", "AP"),
    ("NCU(stop=u,beta=1)", "Q(beta=1)"),
    ("NCU(stop=first,beta=0)", "RR"),
    ("NCU(stop=rb,gamma=1,beta=0)", "NCU(stop=u,beta=0)"),
    ("NCU(stop=rb,gamma=1,beta=1)", "NCU(stop=u,beta=1)"),
    ("NCU(stop=rb,gamma=1,beta=3.5)", "NCU(stop=u,beta=3.5)"),
    ("NCU(stop=gu,beta=1,stopw=1:1:1:1)", "NCU(stop=u,beta=1)"),
    ("NCU(stop=u,beta=2,gain=1:5:10)", "NCU(stop=gu,beta=2,gain=1:5:10,stopw=2:2:2)"),
]

#: inputs for the identities: graded topics (0..4, negative grades), a topic with no relevant document,
#: unretrieved relevant documents, ties
IDENTITY_QRELS = """\
a 0 d1 3
a 0 d2 0
a 0 d3 1
a 0 d4 2
a 0 d5 -2
a 0 d6 4
a 0 d7 1
b 0 e1 0
b 0 e2 -1
c 0 f1 1
c 0 f2 2
c 0 f3 1
"""
IDENTITY_RUN = """\
a Q0 d5 1 9 x
a Q0 d2 2 8 x
a Q0 d3 3 8 x
a Q0 dz 4 7 x
a Q0 d1 5 6 x
a Q0 d7 6 5 x
a Q0 d6 7 1 x
b Q0 e1 1 3 x
b Q0 e9 2 2 x
c Q0 f9 1 5 x
c Q0 f3 2 5 x
c Q0 f10 3 5 x
c Q0 f2 4 4 x
"""


@pytest.mark.parametrize(("left", "right"), IDENTITIES)
def test_ncu_identity(left: str, right: str) -> None:
    values = score(IDENTITY_QRELS, IDENTITY_RUN, [left, right])
    assert values[left].keys() == values[right].keys() == {"a", "b", "c"}
    for topic in values[left]:
        assert values[left][topic] == pytest.approx(values[right][topic], abs=1e-12), topic
    assert any(v > 0 for v in values[left].values())


@pytest.mark.parametrize(("left", "right"), IDENTITIES)
def test_ncu_identity_on_tv_ncu_1(left: str, right: str) -> None:
    values = score(ncu_qrels(), ncu_run(), [left, right])
    assert values[left]["q1"] == pytest.approx(values[right]["q1"], abs=1e-12)

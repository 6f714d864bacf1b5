"""The papers' forms of the diversity measures (spec section 3, Appendix E.3).

* Every TV-DIV-1 value of spec section 3 (intent weights w = (0.5, 0.3, 0.2)), to 1e-6, including the per-intent
  table (each intent's qrels evaluated alone, where an intent-aware measure equals its ad hoc measure).
* A direct, loop-per-document transcription of each formula of section 3 (the oracle below) against the engine's
  vectorised kernels on generated judgments, weights and runs (hypothesis), per topic, to 1e-9.
* The special cases of spec 3.7-3.9 and 9.5 as properties: RBU's bound by RBP-IA, its norm=paper scaling, its
  single-intent binary form, effort, the p -> 1 limit; EU's effort term and sign; CT/ACT of empty runs; single-intent
  reductions; uniform weights reproducing ndeval's P-IA and MAP-IA; ERR-IA's ndeval/paper relation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation import IntentWeights, MeasureError, RunScores, parse_measure, read_qrels, read_run
from evaluation.evaluator import evaluate
from evaluation.formats.source import Blob

EXACT = 1e-6
CLOSE = 1e-9

# -- inputs ---------------------------------------------------------------------------------------------------


def qrels_text(judged: dict[str, dict[str, dict[str, int]]]) -> str:
    """``topic intent docno grade`` lines from topic -> intent -> docno -> grade."""
    return "".join(f"{t} {i} {d} {g}\n" for t, by in judged.items() for i, docs in by.items() for d, g in docs.items())


def run_text(rankings: dict[str, list[str]]) -> str:
    """A run ranking each topic's documents in the given order under every tie policy."""
    return "".join(
        f"{t} Q0 {d} {i} {1000 - i} tv\n" for t, docs in rankings.items() for i, d in enumerate(docs, start=1)
    )


def scores(
    judged: dict[str, dict[str, dict[str, int]]],
    rankings: dict[str, list[str]],
    measures: list[str],
    weights: dict[str, dict[str, float]] | None = None,
    **options: str,
) -> RunScores:
    qrels = read_qrels(Blob.from_bytes(qrels_text(judged).encode(), name="qrels"))
    run = read_run(Blob.from_bytes(run_text(rankings).encode(), name="run"))
    intent_weights = IntentWeights(weights) if weights is not None else None
    return evaluate(qrels, [run], measures, intent_weights=intent_weights, **options)[0]


def values(result: RunScores, measure: str) -> dict[str, float]:
    return result.per_topic(parse_measure(measure).name)


# -- TV-DIV-1 (spec section 3) --------------------------------------------------------------------------------

DIV_JUDGED = {
    "q1": {
        "t1": {"dA": 2, "dB": 1, "dD": 0, "dF": 1},
        "t2": {"dB": 1, "dD": 0, "dE": 2},
        "t3": {"dC": 1, "dD": 0, "dG": 2},
    }
}
DIV_RUN = {"q1": ["dB", "dD", "dA", "dF", "dC", "dX"]}
DIV_WEIGHTS = {"q1": {"t1": 0.5, "t2": 0.3, "t3": 0.2}}

#: every diversity value of spec section 3 for TV-DIV-1, written with the names that select the papers' forms
DIV_VALUES = {
    # 3.1 intent-aware scheme
    "P_IA(variant=paper)@5": 0.400000,
    "AP_IA(variant=paper)": 0.572778,
    "RR_IA": 0.840000,
    "nDCG_IA(gain=lin)@5": 0.531608,
    "ERR_IA(variant=paper,gmax=2)@5": 0.309609,
    "RBP_IA(p=0.8)": 0.291584,
    # 3.2 subtopic recall (also spelled I_rec and StRecall)
    "S_Recall@1": 2 / 3,
    "S_Recall@2": 2 / 3,
    "S_Recall@3": 2 / 3,
    "S_Recall@4": 2 / 3,
    "S_Recall@5": 1.0,
    "S_Recall@6": 1.0,
    "I_rec@4": 2 / 3,
    "I_rec@5": 1.0,
    # 3.3
    "S_RR": 0.2,
    # 3.4 (the raw alpha-DCG is the paper's; alpha-nDCG's greedy normalisation is ndeval's too)
    "alpha_DCG(variant=paper)@5": 2.744522,
    "alpha_nDCG@5": 0.834279,
    "alpha_nDCG@10": 0.812290,
    # 3.5
    "NRBP": 0.554688,
    "nNRBP": 0.813754,
    # 3.6
    "D_nDCG@5": 0.732339,
    "Dsharp_nDCG@5": 0.866170,
    "Dsharp_nDCG(gamma=0.5)@5": 0.866170,
    # 3.7
    "EU(alpha=0.5,e=0.05)": 0.157995,
    "EU(alpha=0.5,e=0)": 0.298003,
    # 3.8
    "CT@5": 0.150000,
    "ACT@5": 0.225833,
    "CT(gamma=0.5,maxh=1)@5": 0.150000,
    # 3.9
    "RBU(p=0.8,e=0.05,norm=rbp)": 0.045603,
    "RBU(p=0.8,e=0.05)@5": 0.048880,
    "RBU(p=0.8,e=0.05,norm=paper)": 0.182413,
    "RBU(p=0.8,e=0)": 0.082496,
    "RBU(p=0.99,e=0.05)@20": 0.002538,
    "RBU(p=0.99,e=0)@20": 0.005464,
}


@pytest.mark.parametrize(("measure", "expected"), DIV_VALUES.items())
def test_tv_div_1(measure: str, expected: float) -> None:
    got = values(scores(DIV_JUDGED, DIV_RUN, [measure], DIV_WEIGHTS), measure)["q1"]
    assert got == pytest.approx(expected, abs=EXACT, rel=0)


#: the per-intent table of spec 3.1: intent -> (P@5, AP, RR, nDCG(lin)@5, ERR(gmax=2)@5, RBP(0.8))
PER_INTENT = {
    "t1": (0.6, 0.805556, 1.0, 0.776343, 0.449219, 0.430400),
    "t2": (0.2, 0.5, 1.0, 0.380094, 0.25, 0.2),
    "t3": (0.2, 0.1, 0.2, 0.147040, 0.05, 0.081920),
}
PER_INTENT_NAMES = (
    ("P_IA(variant=paper)@5", "P@5"),
    ("AP_IA(variant=paper)", "AP"),
    ("RR_IA", "RR"),
    ("nDCG_IA@5", "nDCG@5"),
    ("ERR_IA(variant=paper,gmax=2)@5", "ERR(gmax=2)@5"),
    ("RBP_IA", "RBP"),
)


@pytest.mark.parametrize("intent", sorted(PER_INTENT))
def test_tv_div_1_per_intent(intent: str) -> None:
    """Each intent's qrels alone: with one intent M_IA = M, and both give the table's M_t."""
    alone = {"q1": {intent: DIV_JUDGED["q1"][intent]}}
    names = [n for pair in PER_INTENT_NAMES for n in pair]
    result = scores(alone, DIV_RUN, names)
    for (ia, adhoc), expected in zip(PER_INTENT_NAMES, PER_INTENT[intent]):
        assert values(result, ia)["q1"] == pytest.approx(expected, abs=EXACT, rel=0), ia
        assert values(result, adhoc)["q1"] == pytest.approx(expected, abs=EXACT, rel=0), adhoc


def test_tv_div_1_weighted_sums_of_the_per_intent_table() -> None:
    result = scores(DIV_JUDGED, DIV_RUN, [ia for ia, _ in PER_INTENT_NAMES], DIV_WEIGHTS)
    w = DIV_WEIGHTS["q1"]
    for column, (ia, _) in enumerate(PER_INTENT_NAMES):
        expected = sum(w[t] * PER_INTENT[t][column] for t in PER_INTENT)
        assert values(result, ia)["q1"] == pytest.approx(expected, abs=2 * EXACT, rel=0), ia


def test_tv_div_1_rbu_per_rank_terms() -> None:
    """RBU(p=0.8,e=0.05) per-rank terms .030000, -.008000, .029600, -.002720, .000000, -.003277 (spec 3.9)."""
    terms = (0.030000, -0.008000, 0.029600, -0.002720, 0.000000, -0.003277)
    prefix = [values(scores(DIV_JUDGED, DIV_RUN, [f"RBU(p=0.8,e=0.05)@{k}"], DIV_WEIGHTS),
                     f"RBU(p=0.8,e=0.05)@{k}")["q1"] for k in range(1, 7)]
    got = np.diff([0.0, *prefix])
    np.testing.assert_allclose(got, terms, atol=EXACT, rtol=0)


def test_tv_div_1_cube_test_gains() -> None:
    """Gain@1..5 = 0.40, 0.40, 0.65, 0.65, 0.75 (spec 3.8), read back through CT@k = Gain@k / k."""
    names = [f"CT@{k}" for k in range(1, 6)]
    result = scores(DIV_JUDGED, DIV_RUN, names, DIV_WEIGHTS)
    gains = [values(result, n)["q1"] * k for k, n in enumerate(names, start=1)]
    np.testing.assert_allclose(gains, [0.40, 0.40, 0.65, 0.65, 0.75], atol=EXACT, rtol=0)


def test_tv_div_1_ndeval_defaults_ignore_the_weights() -> None:
    """The ndeval-compatible names keep ndeval's uniform weights whatever weights are given."""
    names = ["P_IA@5", "AP_IA", "ERR_IA@5", "alpha_DCG@5", "alpha_nDCG@5", "NRBP", "nNRBP", "StRecall@3"]
    weighted = scores(DIV_JUDGED, DIV_RUN, names, DIV_WEIGHTS)
    plain = scores(DIV_JUDGED, DIV_RUN, names)
    for name in names:
        assert values(weighted, name) == values(plain, name), name
    assert values(plain, "P_IA@5")["q1"] == pytest.approx((3 + 1 + 1) / 15, abs=1e-12)


# -- names, defaults and refused combinations ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("RBU", "RBU"),
        ("RBU(p=0.8,e=0.03,norm=rbp)", "RBU"),
        ("RBU(e=0.05,p=0.99)@20", "RBU(p=0.99,e=0.05)@20"),
        ("RBU(p=0.99,e=0.05,norm=paper)@20", "RBU(p=0.99,e=0.05,norm=paper)@20"),
        ("ERR_IA(variant=ndeval)@20", "ERR_IA@20"),
        ("ERR_IA(gmax=2,variant=paper)@5", "ERR_IA(variant=paper,gmax=2)@5"),
        ("alpha_nDCG(gain=graded,alpha=0.5)@20", "alpha_nDCG(gain=graded)@20"),
        ("I_rec@10", "StRecall@10"),
        ("S_Recall(denominator=all)@10", "StRecall(denominator=all)@10"),
        ("nDCG_IA(gain=lin)@5", "nDCG_IA@5"),
        ("RBP_IA(p=0.8)", "RBP_IA"),
        ("Q_IA(beta=1)@5", "Q_IA@5"),
        ("Dsharp_nDCG(gamma=0.5)@20", "Dsharp_nDCG@20"),
        ("Dsharp_Q(gamma=0.5)@20", "Dsharp_Q@20"),
        ("EU(alpha=0.5,e=0.05)", "EU"),
        ("CT(gamma=0.5,maxh=1)@10", "CT@10"),
        ("ACT(maxh=2)@10", "ACT(maxh=2)@10"),
    ],
)
def test_canonical_names(given: str, canonical: str) -> None:
    assert parse_measure(given).name == canonical


@pytest.mark.parametrize(
    "name",
    [
        "ERR_IA(variant=paper,gmax=1)@5",  # a grade of 2 is above the scale maximum
    ],
)
def test_refused_combinations(name: str) -> None:
    with pytest.raises(MeasureError):
        scores(DIV_JUDGED, DIV_RUN, [name])


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("ERR_IA(gmax=2)@5", "gmax=2 has no effect with variant=ndeval; it applies with variant=paper"),
        ("ERR_IA(variant=paper,alpha=0.3)@5", "alpha=0.3 has no effect with variant=paper"),
        ("alpha_DCG(gain=graded)@5", "gain=graded has no effect with variant=ndeval"),
    ],
)
def test_parameters_a_variant_ignores_are_refused_when_parsed(name: str, says: str) -> None:
    """A parameter the chosen variant would ignore is an error at parse time, before any input is read."""
    with pytest.raises(MeasureError, match=says):
        parse_measure(name)


@pytest.mark.parametrize("name", ["RBU(p=1)", "RBU(e=-0.1)", "CT(maxh=0)@5", "Dsharp_nDCG(gamma=2)@5",
                                  "D_nDCG", "CT", "RR_IA(variant=paper)", "StRecall(denominator=some)@5"])
def test_invalid_names(name: str) -> None:
    with pytest.raises(MeasureError):
        parse_measure(name)


# -- an oracle: spec section 3 transcribed literally, one topic at a time ------------------------------------


@dataclass
class Topic:
    """One topic's per-intent judgments, (optional) intent weights and ranking, with the spec's definitions."""

    judged: dict[str, dict[str, int]]  # intent -> docno -> grade
    ranking: list[str]
    weights: dict[str, float] | None = None
    collection_max: int = 1  # highest grade of the whole qrels
    intents: list[str] = field(init=False)
    w: dict[str, float] = field(init=False)

    def __post_init__(self) -> None:
        self.intents = [t for t in sorted(self.judged) if any(g >= 1 for g in self.judged[t].values())]
        raw = {t: (1.0 if self.weights is None else self.weights.get(t, 0.0)) for t in self.intents}
        total = sum(raw.values())
        self.w = {t: (v / total if total > 0 else 0.0) for t, v in raw.items()}

    def g(self, t: str, d: str) -> int:
        return max(self.judged[t].get(d, 0), 0)

    def rel(self, t: str, d: str) -> bool:
        return self.g(t, d) >= 1

    def gmax(self, t: str) -> int:
        return max(self.judged[t].values())

    def r(self, t: str, d: str) -> float:
        return (2 ** self.g(t, d) - 1) / 2 ** self.gmax(t) if self.rel(t, d) else 0.0

    def top(self, k: int | None) -> list[str]:
        return self.ranking if k is None else self.ranking[:k]

    def pool(self) -> list[str]:
        return sorted({d for t in self.intents for d in self.judged[t] if self.rel(t, d)})


def o_err_ia(x: Topic, k: int, gmax: int) -> float:
    total = 0.0
    for t in x.intents:
        stay, err = 1.0, 0.0
        for i, d in enumerate(x.top(k), start=1):
            big_r = (2 ** x.g(t, d) - 1) / 2**gmax if x.rel(t, d) else 0.0
            err += stay * big_r / i
            stay *= 1 - big_r
        total += x.w[t] * err
    return total


def o_p_ia(x: Topic, k: int) -> float:
    return sum(x.w[t] * sum(x.rel(t, d) for d in x.top(k)) / k for t in x.intents)


def o_ap_ia(x: Topic) -> float:
    total = 0.0
    for t in x.intents:
        found, s = 0, 0.0
        for i, d in enumerate(x.ranking, start=1):
            if x.rel(t, d):
                found += 1
                s += found / i
        total += x.w[t] * s / sum(x.rel(t, d) for d in x.judged[t])
    return total


def o_rr_ia(x: Topic, k: int | None) -> float:
    total = 0.0
    for t in x.intents:
        first = next((i for i, d in enumerate(x.top(k), start=1) if x.rel(t, d)), None)
        total += x.w[t] / first if first else 0.0
    return total


def o_gain(g: int, kind: str) -> float:
    return float(g) if kind == "lin" else 2.0**g - 1


def o_ndcg_ia(x: Topic, k: int | None, kind: str) -> float:
    total = 0.0
    for t in x.intents:
        dcg = sum(o_gain(x.g(t, d), kind) / math.log2(i + 1) for i, d in enumerate(x.top(k), start=1))
        ideal = sorted((o_gain(x.g(t, d), kind) for d in x.judged[t] if x.rel(t, d)), reverse=True)
        idcg = sum(v / math.log2(i + 1) for i, v in enumerate(ideal[:k] if k else ideal, start=1))
        total += x.w[t] * dcg / idcg
    return total


def o_rbp_ia(x: Topic, p: float, kind: str, k: int | None) -> float:
    def rel(t: str, d: str) -> float:
        if kind == "binary":
            return float(x.rel(t, d))
        if kind == "graded":
            return x.g(t, d) / x.collection_max if x.rel(t, d) else 0.0
        return x.r(t, d)

    return sum(x.w[t] * (1 - p) * p ** (i - 1) * rel(t, d)
               for t in x.intents for i, d in enumerate(x.top(k), start=1))


def o_q_ia(x: Topic, beta: float, k: int | None) -> float:
    total = 0.0
    for t in x.intents:
        ideal = sorted((x.g(t, d) for d in x.judged[t] if x.rel(t, d)), reverse=True)
        found, cg, s = 0, 0.0, 0.0
        for n, d in enumerate(x.top(k), start=1):
            if x.rel(t, d):
                found += 1
                cg += x.g(t, d)
                s += (found + beta * cg) / (n + beta * sum(ideal[:n]))
        total += x.w[t] * s / (len(ideal) if k is None else min(k, len(ideal)))
    return total


def o_s_rr(x: Topic, k: int | None) -> float:
    if not x.intents:
        return 0.0
    for n in range(1, len(x.top(k)) + 1):
        if all(any(x.rel(t, d) for d in x.ranking[:n]) for t in x.intents):
            return 1 / n
    return 0.0


def o_recall(x: Topic, k: int, denominator: str = "Tstar") -> float:
    covered = sum(any(x.rel(t, d) for d in x.top(k)) for t in x.intents)
    n = len(x.intents) if denominator == "Tstar" else len(x.judged)
    return covered / n if n else 0.0


def o_novelty(x: Topic, docs: list[str], alpha: float, graded: bool) -> list[float]:
    seen = dict.fromkeys(x.intents, 0)
    out = []
    for d in docs:
        out.append(sum((x.r(t, d) if graded else 1.0) * (1 - alpha) ** seen[t] for t in x.intents if x.rel(t, d)))
        for t in x.intents:
            seen[t] += x.rel(t, d)
    return out


def o_greedy(x: Topic, alpha: float, graded: bool) -> list[str]:
    """Spec B.4: repeatedly the largest marginal gain, ties to the larger docno (byte-wise)."""
    pool, placed = x.pool(), []
    while pool:
        gains = {d: o_novelty(x, [*placed, d], alpha, graded)[-1] for d in pool}
        best = max(pool, key=lambda d: (gains[d], d.encode()))
        placed.append(best)
        pool.remove(best)
    return placed


def o_alpha_dcg(x: Topic, docs: list[str], k: int, alpha: float, graded: bool) -> float:
    return sum(v / math.log2(i + 1) for i, v in enumerate(o_novelty(x, docs[:k], alpha, graded), start=1))


def o_alpha_ndcg(x: Topic, k: int, alpha: float, graded: bool) -> float:
    ideal = o_alpha_dcg(x, o_greedy(x, alpha, graded), k, alpha, graded)
    return o_alpha_dcg(x, x.ranking, k, alpha, graded) / ideal if ideal > 0 else 0.0


def o_gg(x: Topic, d: str, kind: str = "lin") -> float:
    return sum(x.w[t] * o_gain(x.g(t, d), kind) for t in x.intents if x.rel(t, d))


def o_ideal_gg(x: Topic, kind: str = "lin") -> list[float]:
    docs = {d for t in x.judged for d in x.judged[t]}
    return sorted((v for v in (o_gg(x, d, kind) for d in docs) if v > 0), reverse=True)


def o_d_ndcg(x: Topic, k: int, kind: str = "lin") -> float:
    dcg = sum(o_gg(x, d, kind) / math.log2(i + 1) for i, d in enumerate(x.top(k), start=1))
    idcg = sum(v / math.log2(i + 1) for i, v in enumerate(o_ideal_gg(x, kind)[:k], start=1))
    return dcg / idcg if idcg > 0 else 0.0


def o_d_q(x: Topic, k: int, beta: float = 1.0) -> float:
    ideal = o_ideal_gg(x)
    found, cg, s = 0, 0.0, 0.0
    for n, d in enumerate(x.top(k), start=1):
        gain = o_gg(x, d)
        cg += gain
        if gain > 0:
            found += 1
            s += (found + beta * cg) / (n + beta * sum(ideal[:n]))
    return s / min(k, len(ideal)) if ideal else 0.0


def o_eu(x: Topic, alpha: float, e: float, k: int | None, sat: str = "exp") -> float:
    seen = dict.fromkeys(x.intents, 0)
    total = 0.0
    for i, d in enumerate(x.top(k), start=1):
        u = sum(x.w[t] * (x.r(t, d) if sat == "exp" else 1.0) * (1 - alpha) ** seen[t]
                for t in x.intents if x.rel(t, d))
        total += (u - e) / (1 + math.log2(i))
        for t in x.intents:
            seen[t] += x.rel(t, d)
    return total


def o_cube(x: Topic, gamma: float, maxh: float, k: int) -> tuple[float, float]:
    """(CT@k, ACT@k) by the water-filling loop of spec 3.8."""
    height = dict.fromkeys(x.intents, 0.0)
    count = dict.fromkeys(x.intents, 0)
    gain, cumulative = 0.0, []
    for d in x.top(k):
        for t in x.intents:
            rel = x.g(t, d) / x.gmax(t) if x.rel(t, d) else 0.0
            if rel > 0 and height[t] < maxh:
                h = min(gamma ** count[t] * rel, maxh - height[t])
                gain += x.w[t] * h
                height[t] += h
                count[t] += 1
        cumulative.append(gain)
    n = len(cumulative)
    if n == 0:
        return 0.0, 0.0
    return cumulative[-1] / (maxh * n), sum(g / (maxh * j) for j, g in enumerate(cumulative, start=1)) / n


def o_rbu(x: Topic, p: float, e: float, k: int | None, norm: str = "rbp", sat: str = "exp") -> float:
    unsatisfied = dict.fromkeys(x.intents, 1.0)
    total = 0.0
    for i, d in enumerate(x.top(k), start=1):
        gain = 0.0
        for t in x.intents:
            r = (1.0 if x.rel(t, d) else 0.0) if sat == "binary" else x.r(t, d)
            gain += x.w[t] * r * unsatisfied[t]
            unsatisfied[t] *= 1 - r
        weight = (1 - p) * p ** (i - 1) if norm == "rbp" else p**i
        total += weight * (gain - e)
    return total


# -- generated inputs -------------------------------------------------------------------------------------------

#: docnos whose byte order matters for the greedy ideal's tie rule (d9 > d10 > d1, D5 < d1 < e1)
DOCNOS = ("d1", "d2", "d9", "d10", "d11", "d10a", "D5", "e1", "e2", "f")
UNJUDGED = ("u1", "u2", "u3")
INTENTS = ("a", "b", "c", "d")
TOPICS = ("1", "2", "10", "q")


@dataclass(frozen=True)
class Case:
    judged: dict[str, dict[str, dict[str, int]]]
    rankings: dict[str, list[str]]
    weights: dict[str, dict[str, float]] | None

    @property
    def collection_max(self) -> int:
        return max((g for by in self.judged.values() for docs in by.values() for g in docs.values()), default=0)

    def topics(self) -> dict[str, Topic]:
        """The evaluated topics (in both run and qrels) as oracle topics."""
        return {
            t: Topic(self.judged[t], self.rankings[t], (self.weights or {}).get(t), self.collection_max)
            for t in self.rankings
            if t in self.judged
        }

    def score(self, measures: list[str], **options: str) -> RunScores:
        return scores(self.judged, self.rankings, measures, self.weights, **options)


grades = st.sampled_from((-1, 0, 0, 1, 1, 2, 3))


@st.composite
def cases(draw: st.DrawFn, max_intents: int = 4, weighted: bool | None = None) -> Case:
    qrels_topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3, unique=True))
    judged = {}
    for t in qrels_topics:
        intents = draw(st.lists(st.sampled_from(INTENTS[:max_intents]), min_size=1, max_size=max_intents,
                                unique=True))
        judged[t] = {i: draw(st.dictionaries(st.sampled_from(DOCNOS), grades, min_size=1, max_size=7))
                     for i in intents}
    run_topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3, unique=True))
    rankings = {t: draw(st.lists(st.sampled_from(DOCNOS + UNJUDGED), min_size=1, max_size=12, unique=True))
                for t in run_topics}
    use_weights = draw(st.booleans()) if weighted is None else weighted
    weights = None
    if use_weights:
        positive = st.floats(min_value=0.05, max_value=1.0, allow_nan=False)
        weights = {t: {i: draw(positive) for i in by} for t, by in judged.items()}
    return Case(judged, rankings, weights)


SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: engine name -> oracle(topic) for the comparison on generated inputs
ORACLE = {
    "ERR_IA(variant=paper)@1": lambda x: o_err_ia(x, 1, x.collection_max),
    "ERR_IA(variant=paper)@4": lambda x: o_err_ia(x, 4, x.collection_max),
    "ERR_IA(variant=paper,gmax=3)@10": lambda x: o_err_ia(x, 10, 3),
    "P_IA(variant=paper)@3": lambda x: o_p_ia(x, 3),
    "P_IA(variant=paper)@20": lambda x: o_p_ia(x, 20),
    "AP_IA(variant=paper)": o_ap_ia,
    "RR_IA": lambda x: o_rr_ia(x, None),
    "RR_IA@2": lambda x: o_rr_ia(x, 2),
    "nDCG_IA@5": lambda x: o_ndcg_ia(x, 5, "lin"),
    "nDCG_IA(gain=exp)": lambda x: o_ndcg_ia(x, None, "exp"),
    "RBP_IA": lambda x: o_rbp_ia(x, 0.8, "binary", None),
    "RBP_IA(p=0.5,gain=graded)@4": lambda x: o_rbp_ia(x, 0.5, "graded", 4),
    "RBP_IA(p=0.9,gain=exp)": lambda x: o_rbp_ia(x, 0.9, "exp", None),
    "Q_IA": lambda x: o_q_ia(x, 1.0, None),
    "Q_IA(beta=0.5)@3": lambda x: o_q_ia(x, 0.5, 3),
    "S_RR": lambda x: o_s_rr(x, None),
    "S_RR@4": lambda x: o_s_rr(x, 4),
    "StRecall@3": lambda x: o_recall(x, 3),
    "I_rec(denominator=all)@3": lambda x: o_recall(x, 3, "all"),
    "alpha_DCG(variant=paper)@5": lambda x: o_alpha_dcg(x, x.ranking, 5, 0.5, False),
    "alpha_DCG(variant=paper,gain=graded,alpha=0.25)@10": lambda x: o_alpha_dcg(x, x.ranking, 10, 0.25, True),
    "alpha_nDCG@5": lambda x: o_alpha_ndcg(x, 5, 0.5, False),
    "alpha_nDCG(gain=graded)@3": lambda x: o_alpha_ndcg(x, 3, 0.5, True),
    "alpha_nDCG(gain=graded)@20": lambda x: o_alpha_ndcg(x, 20, 0.5, True),
    "D_nDCG@5": lambda x: o_d_ndcg(x, 5),
    "D_nDCG(gain=exp)@10": lambda x: o_d_ndcg(x, 10, "exp"),
    "Dsharp_nDCG@5": lambda x: 0.5 * o_recall(x, 5) + 0.5 * o_d_ndcg(x, 5),
    "D_Q@5": lambda x: o_d_q(x, 5),
    "D_Q(beta=2)@20": lambda x: o_d_q(x, 20, 2.0),
    "Dsharp_Q(gamma=0.25)@5": lambda x: 0.25 * o_recall(x, 5) + 0.75 * o_d_q(x, 5),
    "EU": lambda x: o_eu(x, 0.5, 0.05, None),
    "EU(alpha=0.1,e=0)@4": lambda x: o_eu(x, 0.1, 0.0, 4),
    "EU(sat=binary)": lambda x: o_eu(x, 0.5, 0.05, None, "binary"),
    "CT@5": lambda x: o_cube(x, 0.5, 1.0, 5)[0],
    "ACT@5": lambda x: o_cube(x, 0.5, 1.0, 5)[1],
    "CT(gamma=0.8,maxh=0.6)@20": lambda x: o_cube(x, 0.8, 0.6, 20)[0],
    "ACT(gamma=0,maxh=2)@20": lambda x: o_cube(x, 0.0, 2.0, 20)[1],
    "RBU": lambda x: o_rbu(x, 0.8, 0.03, None),
    "RBU(p=0.99,e=0.05)@5": lambda x: o_rbu(x, 0.99, 0.05, 5),
    "RBU(p=0.5,e=0.1,norm=paper)": lambda x: o_rbu(x, 0.5, 0.1, None, "paper"),
    "RBU(sat=binary,e=0)": lambda x: o_rbu(x, 0.8, 0.0, None, sat="binary"),
}


@SETTINGS
@given(case=cases())
def test_engine_matches_the_spec_transcription(case: Case) -> None:
    result = case.score(list(ORACLE))
    topics = case.topics()
    assert set(result.topics) == set(topics)
    wrong = []
    for name, oracle in ORACLE.items():
        got = values(result, name)
        for t, x in topics.items():
            want = oracle(x)
            if not abs(got[t] - want) <= CLOSE:
                wrong.append(f"{name} topic {t}: engine {got[t]!r}, spec {want!r}")
    assert not wrong, "\n".join(wrong) + f"\n{case}"


# -- properties (spec 3.7-3.9, 9) -----------------------------------------------------------------------------

NORMALISED = ["ERR_IA(variant=paper)@5", "P_IA(variant=paper)@5", "AP_IA(variant=paper)", "RR_IA", "nDCG_IA@5",
              "RBP_IA(gain=exp)", "Q_IA@5", "S_RR", "StRecall(denominator=all)@5", "D_nDCG@5", "Dsharp_nDCG@5",
              "D_Q@5", "Dsharp_Q@5", "CT@5", "ACT@5", "CT(maxh=3)@10", "ACT(gamma=1,maxh=0.5)@10"]


@SETTINGS
@given(case=cases(), topics=st.sampled_from(["common", "complete"]))
def test_normalised_values_lie_in_the_unit_interval(case: Case, topics: str) -> None:
    result = case.score(NORMALISED, topics=topics)
    for name, v in result.values.items():
        assert np.all(np.isfinite(v)), name
        assert np.all((v >= 0.0) & (v <= 1.0 + 1e-12)), f"{name}: {v}"


@SETTINGS
@given(case=cases(), p=st.sampled_from([0.5, 0.8, 0.99]), k=st.sampled_from(["", "@3", "@20"]))
def test_rbu_without_effort_is_bounded_by_rbp_ia(case: Case, p: float, k: str) -> None:
    """Spec 3.9 / 9.5: RBU(e=0, norm=rbp) <= RBP_IA with the same graded r (the cascade only removes gain)."""
    rbu, rbp = f"RBU(p={p},e=0){k}", f"RBP_IA(p={p},gain=exp){k}"
    result = case.score([rbu, rbp])
    assert np.all(result.values[parse_measure(rbu).name] <= result.values[parse_measure(rbp).name] + 1e-12)


@SETTINGS
@given(case=cases(), p=st.sampled_from([0.3, 0.8, 0.99]), e=st.sampled_from([0.0, 0.03, 0.5]))
def test_rbu_paper_norm_is_a_constant_multiple(case: Case, p: float, e: float) -> None:
    """Spec 9.5: RBU(norm=paper) = RBU(norm=rbp) * p / (1-p)."""
    paper, rbp = f"RBU(p={p},e={e},norm=paper)@10", f"RBU(p={p},e={e})@10"
    result = case.score([paper, rbp])
    np.testing.assert_allclose(result.values[parse_measure(paper).name],
                               result.values[parse_measure(rbp).name] * p / (1 - p), rtol=1e-9, atol=1e-12)


@SETTINGS
@given(case=cases(max_intents=1), p=st.sampled_from([0.2, 0.8, 0.99]))
def test_rbu_single_intent_binary_satisfaction(case: Case, p: float) -> None:
    """Spec 3.9: one intent, r in {0, 1}, e = 0: RBU = (1-p) p^(i*-1), i* the first relevant rank (0 if none)."""
    name = f"RBU(p={p},e=0,sat=binary)"
    got = values(case.score([name]), name)
    for t, x in case.topics().items():
        first = next((i for i, d in enumerate(x.ranking, start=1) if any(x.rel(u, d) for u in x.intents)), None)
        assert got[t] == pytest.approx((1 - p) * p ** (first - 1) if first else 0.0, abs=1e-12)


@SETTINGS
@given(case=cases(), p=st.sampled_from([0.5, 0.8, 0.99]), e=st.sampled_from([0.001, 0.03, 0.5]),
       k=st.sampled_from(["", "@13", "@40"]))
def test_rbu_appending_a_zero_gain_document_lowers_it(case: Case, p: float, e: float, k: str) -> None:
    """Spec 3.9 (Conf): one more unjudged document within the cutoff strictly lowers RBU when e > 0, and
    lowers it by exactly its effort term."""
    name = f"RBU(p={p},e={e}){k}"
    longer = Case(case.judged, {t: [*docs, "zz-unjudged"] for t, docs in case.rankings.items()}, case.weights)
    before, after = values(case.score([name]), name), values(longer.score([name]), name)
    for t, docs in case.rankings.items():
        if t in before:
            assert after[t] < before[t]
            assert before[t] - after[t] == pytest.approx(e * (1 - p) * p ** len(docs), rel=1e-9, abs=1e-15)


def test_rbu_effort_example() -> None:
    """Spec 3.9 [PAPER]: when the first document's satisfaction equals the effort, its net gain is zero
    (r = (2^1 - 1)/2^3 = 0.125 for a grade-1 document of an intent whose highest grade is 3)."""
    judged = {"q": {"t": {"a": 1, "b": 3}}}
    for norm in ("rbp", "paper"):
        name = f"RBU(e=0.125,norm={norm})"
        assert values(scores(judged, {"q": ["a"]}, [name]), name)["q"] == pytest.approx(0.0, abs=1e-15)


@SETTINGS
@given(case=cases())
def test_rbu_tends_to_the_probability_of_eventual_satisfaction(case: Case) -> None:
    """Spec 3.9: e = 0, p -> 1, norm=paper: RBU -> sum_t w(t) (1 - prod_i (1 - r(d_i,t)))."""
    name = "RBU(p=0.9999999,e=0,norm=paper)"
    got = values(case.score([name]), name)
    for t, x in case.topics().items():
        want = sum(x.w[u] * (1 - math.prod(1 - x.r(u, d) for d in x.ranking)) for u in x.intents)
        assert got[t] == pytest.approx(want, abs=1e-5)


@SETTINGS
@given(case=cases(), e=st.sampled_from([0.01, 0.05, 0.5]), k=st.sampled_from(["", "@4"]))
def test_eu_effort_is_a_discounted_cost_per_retrieved_document(case: Case, e: float, k: str) -> None:
    """EU(e) = EU(e=0) - e sum_{i<=min(k,n)} 1/(1 + log2 i); a run of non-relevant documents scores below 0."""
    with_e, without = f"EU(e={e}){k}", f"EU(e=0){k}"
    result = case.score([with_e, without])
    cut = 4 if k else None
    for t, docs in case.rankings.items():
        if t not in result.topics:
            continue
        n = len(docs) if cut is None else min(cut, len(docs))
        cost = e * sum(1 / (1 + math.log2(i)) for i in range(1, n + 1))
        assert values(result, with_e)[t] == pytest.approx(values(result, without)[t] - cost, abs=1e-12)


def test_eu_and_rbu_can_be_negative() -> None:
    """Spec 3.7, 3.9: a run of non-relevant documents costs effort and gains nothing."""
    judged = {"q": {"t": {"a": 1, "b": 0}}}
    result = scores(judged, {"q": ["b", "x"]}, ["EU", "RBU", "EU(e=0)", "RBU(e=0)"])
    assert values(result, "EU")["q"] == pytest.approx(-0.05 - 0.05 / 2, abs=1e-15)
    assert values(result, "RBU")["q"] == pytest.approx(-0.03 * 0.2 * (1 + 0.8), abs=1e-15)
    assert values(result, "EU(e=0)")["q"] == values(result, "RBU(e=0)")["q"] == 0.0


def test_empty_runs_score_zero() -> None:
    """Spec 1.3, 3.8: a judged topic missing from the run (topics=complete) scores 0 for every measure, CT and
    ACT included (no time spent), RBU and EU included (no gain, no effort)."""
    judged = {"q": {"t": {"a": 2, "b": 1}}, "r": {"t": {"c": 1}, "u": {"d": 2}}}
    names = [*NORMALISED, "EU", "RBU", "RBU(p=0.99,e=0.05)@20", "alpha_DCG(variant=paper)@5",
             "alpha_nDCG(gain=graded)@5"]
    result = scores(judged, {"q": ["a"]}, names, topics="complete")
    assert result.topics == ("q", "r")
    for name in names:
        assert values(result, name)["r"] == 0.0, name


@SETTINGS
@given(case=cases(max_intents=1))
def test_single_intent_measures_reduce_to_the_ad_hoc_ones(case: Case) -> None:
    """Spec 3.1 and 9.3: with one intent M_IA = M; S_Recall@k = 1[a relevant document in the top k];
    D-nDCG = nDCG(lin)."""
    pairs = [
        ("P_IA(variant=paper)@5", "P@5"), ("AP_IA(variant=paper)", "AP"), ("RR_IA", "RR"), ("RR_IA@3", "RR@3"),
        ("nDCG_IA@5", "nDCG@5"), ("nDCG_IA(gain=exp)", "nDCG(gain=exp)"),
        ("ERR_IA(variant=paper)@5", "ERR(gmax=collection)@5"), ("RBP_IA(p=0.6)", "RBP(p=0.6)"),
        ("RBP_IA(gain=graded)", "RBP(rel=graded)"), ("Q_IA", "Q"), ("Q_IA@4", "Q@4"), ("StRecall@3", "Success@3"),
        ("D_nDCG@5", "nDCG@5"), ("D_nDCG(gain=exp)@10", "nDCG(gain=exp)@10"),
    ]
    result = case.score([n for pair in pairs for n in pair])
    for ia, adhoc in pairs:
        np.testing.assert_allclose(result.values[parse_measure(ia).name], result.values[parse_measure(adhoc).name],
                                   rtol=0, atol=1e-12, err_msg=f"{ia} vs {adhoc}")


@SETTINGS
@given(case=cases(weighted=False))
def test_uniform_weights_give_ndeval_numbers(case: Case) -> None:
    """With uniform weights the weighted forms of P-IA and MAP-IA are ndeval's."""
    pairs = [("P_IA(variant=paper)@5", "P_IA@5"), ("P_IA(variant=paper)@1", "P_IA@1"),
             ("AP_IA(variant=paper)", "AP_IA")]
    result = case.score([n for pair in pairs for n in pair])
    for paper, ndeval in pairs:
        np.testing.assert_allclose(result.values[parse_measure(paper).name],
                                   result.values[parse_measure(ndeval).name], rtol=0, atol=1e-12)


@SETTINGS
@given(case=cases(weighted=False), k=st.sampled_from([2, 3, 5, 20]))
def test_ndeval_err_ia_is_the_paper_form_over_the_ideal_ideal(case: Case, k: int) -> None:
    """Appendix E.2: with binary grades (gmax = 1, so R = 0.5 per relevant document) and uniform weights, ndeval's
    numerator sum_{i<=k} NG(i)/i is 2 |T| times the paper's ERR-IA@k (alpha |T| ERR-IA = ERR-IA |T| / 2 per term:
    R (1-R)^c = 0.5 (1-alpha)^c), and its divisor is |T| sum_{i<=k} 0.5^(i-1)/i."""
    binary = Case({t: {i: {d: min(max(g, 0), 1) for d, g in docs.items()} for i, docs in by.items()}
                   for t, by in case.judged.items()}, case.rankings, None)
    paper, ndeval = f"ERR_IA(variant=paper,gmax=1)@{k}", f"ERR_IA@{k}"
    result = binary.score([paper, ndeval])
    scale = sum(0.5 ** (i - 1) / i for i in range(1, k + 1))
    np.testing.assert_allclose(result.values[parse_measure(ndeval).name] * scale / 2,
                               result.values[parse_measure(paper).name], rtol=1e-12, atol=1e-15)


@SETTINGS
@given(case=cases())
def test_ideal_rankings_score_one(case: Case) -> None:
    """Spec 9.2: the greedy ideal (graded gains) scores 1 for alpha_nDCG(gain=graded); the global-gain order
    scores 1 for D-nDCG."""
    topics = case.topics()
    greedy = {t: o_greedy(x, 0.5, True) for t, x in topics.items()}
    by_gg = {t: sorted(x.pool(), key=lambda d, x=x: -o_gg(x, d)) for t, x in topics.items()}
    for rankings, name in ((greedy, "alpha_nDCG(gain=graded)@5"), (by_gg, "D_nDCG@5")):
        ranked = {t: docs for t, docs in rankings.items() if docs}  # a topic with no relevant document: no run
        if not ranked:
            continue
        got = values(Case(case.judged, ranked, case.weights).score([name]), name)
        assert set(got) == set(ranked)
        for t in ranked:
            assert got[t] == pytest.approx(1.0, abs=1e-12), (name, t)


def test_the_oracle_reproduces_tv_div_1() -> None:
    """The transcription itself is checked against the spec's printed values."""
    x = Topic(DIV_JUDGED["q1"], DIV_RUN["q1"], DIV_WEIGHTS["q1"], collection_max=2)
    checks = {
        "P_IA@5": (o_p_ia(x, 5), 0.4), "AP_IA": (o_ap_ia(x), 0.572778), "RR_IA": (o_rr_ia(x, None), 0.84),
        "nDCG_IA@5": (o_ndcg_ia(x, 5, "lin"), 0.531608), "ERR_IA@5": (o_err_ia(x, 5, 2), 0.309609),
        "RBP_IA": (o_rbp_ia(x, 0.8, "binary", None), 0.291584), "S_RR": (o_s_rr(x, None), 0.2),
        "alpha_DCG@5": (o_alpha_dcg(x, x.ranking, 5, 0.5, False), 2.744522),
        "alpha_nDCG@5": (o_alpha_ndcg(x, 5, 0.5, False), 0.834279),
        "D_nDCG@5": (o_d_ndcg(x, 5), 0.732339), "EU": (o_eu(x, 0.5, 0.05, None), 0.157995),
        "CT@5": (o_cube(x, 0.5, 1.0, 5)[0], 0.15), "ACT@5": (o_cube(x, 0.5, 1.0, 5)[1], 0.225833),
        "RBU": (o_rbu(x, 0.8, 0.05, None), 0.045603), "RBU paper": (o_rbu(x, 0.8, 0.05, None, "paper"), 0.182413),
    }
    for name, (got, expected) in checks.items():
        assert got == pytest.approx(expected, abs=EXACT), name
    assert o_greedy(x, 0.5, False) == ["dB", "dG", "dF", "dE", "dC", "dA"]

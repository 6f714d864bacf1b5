"""Hierarchical-intent measures (spec 4.7-4.9): TV-HIER-1 (given as a hierarchy file, and built end to end from
fingerprints) and TV-HIER-2 to 1e-6; the spec's properties (delta = 0 and h=FLAT reduce to the flat measures,
SUP+WI at delta = 0 equals SUP, the ideal ranking scores 1); a literal transcription of N-rec, HD-nDCG and the
LA-measures against the engine on generated inputs; reuse of exported hierarchies; errors naming what is
missing."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from evaluation import IntentWeights, MeasureError, RunScores, parse_measure, read_qrels, read_run
from evaluation.docsim import DocumentVectors
from evaluation.evaluator import evaluate
from evaluation.formats import Blob
from evaluation.hierarchy import (
    Hierarchies,
    HierarchyInputs,
    HierarchySettings,
    Node,
    SuperIntent,
    TopicHierarchy,
    assign_weights,
    build_hierarchies,
    depth_top_weights,
    from_json,
    layered_slots,
    to_json,
    topic_judgments,
)
from evaluation.hierarchy.prepare import similarity_function
from evaluation.intent_ranking import IntentInputs, intent_slots
from evaluation.judged_ranking import judge_ranking
from evaluation.measures.diversity.alpha_ndcg import alpha_ndcg
from evaluation.measures.diversity.d_ndcg import d_ndcg
from evaluation.measures.diversity.err_ia import err_ia
from evaluation.measures.diversity.intent_precision import subtopic_recall
from evaluation.model import Qrels, Run
from evaluation.ranking import rank_run
from evaluation.side_inputs import SideInputs

EXACT = 1e-6
CLOSE = 1e-9


def qrels_of(text: str) -> Qrels:
    return read_qrels(Blob.from_bytes(text.encode(), "qrels"))


def run_of(rankings: Mapping[str, Sequence[str]]) -> Run:
    lines = "".join(f"{t} Q0 {d} {i} {1000 - i} r\n" for t, docs in rankings.items() for i, d in enumerate(docs, 1))
    return read_run(Blob.from_bytes(lines.encode(), "run"))


def scores(qrels: Qrels, run: Run, measures: Sequence[str], side: Mapping[str, Any],
           weights: IntentWeights | None = None) -> RunScores:
    return evaluate(qrels, [run], measures, side=SideInputs(dict(side)), intent_weights=weights)[0]


def value(result: RunScores, measure: str, topic: str | None = None) -> float:
    name = parse_measure(measure).name
    return result.per_topic(name)[topic] if topic is not None else result.mean(name)


# -- TV-HIER-1 ------------------------------------------------------------------------------------------------

TV1_QRELS = "1 i1 a 1\n1 i1 b 2\n1 i1 c 1\n1 i2 e 1\n1 i2 f 1\n1 i1 g 0\n1 i2 g 0\n"
TV1_RUN = {"1": ["a", "b", "e", "g", "c"]}
TV1_NODES = (
    Node("i1", None, 1, "intent", ("i1",), ("a", "b", "c")),
    Node("i2", None, 1, "intent", ("i2",), ("e", "f")),
    Node("s11", "i1", 2, "cluster", ("i1",), ("a", "b")),
    Node("s12", "i1", 2, "dummy", ("i1",), ("c",)),
    Node("s21", "i2", 2, "dummy", ("i2",), ("e", "f")),
    Node("a", "s11", 3, "leaf", ("i1",), ("a",)),
    Node("b", "s11", 3, "leaf", ("i1",), ("b",)),
    Node("c", "s12", 3, "leaf", ("i1",), ("c",)),
    Node("ef", "s21", 3, "dummy", ("i2",), ("e", "f")),
)


def tv1(top: str) -> Hierarchies:
    weights = {"i1": 0.5, "i2": 0.5} if top == "uniform" else depth_top_weights({"i1": 2, "i2": 0})
    return Hierarchies({"1": assign_weights(TopicHierarchy("1", TV1_NODES), top=weights)})


def test_tv_hier_1_weights() -> None:
    layers = [[n.weight for n in layer] for layer in tv1("uniform")["1"].layers]
    np.testing.assert_allclose(layers[0], [.5, .5], atol=1e-12)
    np.testing.assert_allclose(layers[1], [1 / 3, 1 / 6, .5], atol=1e-12)
    np.testing.assert_allclose(layers[2], [1 / 6, 1 / 6, 1 / 6, .5], atol=1e-12)
    depth = [[n.weight for n in layer] for layer in tv1("depth")["1"].layers]
    np.testing.assert_allclose(depth[0], [2 / 3, 1 / 3], atol=1e-12)


TV1_UNIFORM = {
    2: {"N_rec": 0.444444, "D_nDCG_LA": 0.696558, "HD_nDCG": 0.767670, "HDsharp_nDCG": 0.606057,
        "LADsharp_nDCG": 0.570501, "layers": (0.859719, 0.767670, 0.462284)},
    3: {"N_rec": 0.777778, "D_nDCG_LA": 0.778438, "HD_nDCG": 0.814810, "HDsharp_nDCG": 0.796294,
        "LADsharp_nDCG": 0.778108, "layers": (0.882121, 0.814810, 0.638384)},
    5: {"N_rec": 1.0, "D_nDCG_LA": 0.719197, "HD_nDCG": 0.749360, "HDsharp_nDCG": 0.874680,
        "LADsharp_nDCG": 0.859598, "layers": (0.797453, 0.741879, 0.618259)},
}


def per_layer(qrels: Qrels, run: Run, hierarchies: Hierarchies,
              kernel: Callable[[IntentInputs, Mapping[str, Any], int | None], np.ndarray],
              params: Mapping[str, Any], cutoff: int) -> list[float]:
    """A flat kernel on every layer of the (given) hierarchy of the run's first topic."""
    docs = judge_ranking(qrels, rank_run(run, "trec"), run.topics)
    slots = layered_slots(hierarchies, qrels)
    view = HierarchyInputs(docs, qrels, lambda settings: slots).view(HierarchySettings(h="given"))
    return [float(kernel(layer, {"rel": 1, **params}, cutoff)[0]) for layer in view.layers]


@pytest.mark.parametrize("k", [2, 3, 5])
def test_tv_hier_1_uniform(k: int) -> None:
    qrels, run = qrels_of(TV1_QRELS), run_of(TV1_RUN)
    expected = TV1_UNIFORM[k]
    names = [f"{m}(h=given)@{k}" for m in ("N_rec", "D_nDCG_LA", "HD_nDCG", "HDsharp_nDCG", "LADsharp_nDCG")]
    result = scores(qrels, run, names, {"hierarchy": tv1("uniform")})
    for name in names:
        assert value(result, name) == pytest.approx(expected[name.split("(")[0]], abs=EXACT), name
    layers = per_layer(qrels, run, tv1("uniform"), d_ndcg, {"gain": "lin"}, k)
    np.testing.assert_allclose(layers, expected["layers"], atol=EXACT)


def test_tv_hier_1_uniform_other_measures_at_5() -> None:
    qrels, run, h = qrels_of(TV1_QRELS), run_of(TV1_RUN), tv1("uniform")
    alpha = per_layer(qrels, run, h, alpha_ndcg, {"alpha": 0.5, "gain": "binary"}, 5)
    np.testing.assert_allclose(alpha, (0.871954, 0.867159, 0.913885), atol=EXACT)
    err = per_layer(qrels, run, h, err_ia, {"alpha": 0.5, "variant": "paper", "gmax": 2}, 5)
    np.testing.assert_allclose(err, (0.311979, 0.227083, 0.154167), atol=EXACT)
    recall = per_layer(qrels, run, h, subtopic_recall, {"denominator": "Tstar"}, 5)
    assert recall == [1.0, 1.0, 1.0]
    names = ["alpha_nDCG_LA(h=given)@5", "ERR_IA_LA(h=given,gmax=2)@5", "I_rec_LA(h=given)@5",
             "LA_I_rec(h=given)@5"]
    result = scores(qrels, run, names, {"hierarchy": h})
    assert value(result, names[0]) == pytest.approx(0.884332, abs=EXACT)
    assert value(result, names[1]) == pytest.approx(sum((0.311979, 0.227083, 0.154167)) / 3, abs=EXACT)
    assert value(result, names[2]) == value(result, names[3]) == 1.0


def test_tv_hier_1_depth_weights() -> None:
    qrels, run, h = qrels_of(TV1_QRELS), run_of(TV1_RUN), tv1("depth")
    names = ["D_nDCG_LA(h=given)@5", "HD_nDCG(h=given)@5", "HDsharp_nDCG(h=given)@5", "LADsharp_nDCG(h=given)@5"]
    result = scores(qrels, run, names, {"hierarchy": h})
    for name, expected in zip(names, (0.791792, 0.808370, 0.904185, 0.895896)):
        assert value(result, name) == pytest.approx(expected, abs=EXACT), name
    np.testing.assert_allclose(per_layer(qrels, run, h, d_ndcg, {"gain": "lin"}, 5), (0.818916, 0.803519, 0.752940),
                               atol=EXACT)
    err = per_layer(qrels, run, h, err_ia, {"alpha": 0.5, "variant": "paper", "gmax": 2}, 5)
    np.testing.assert_allclose(err, (0.388194, 0.275, 0.177778), atol=EXACT)


#: 8-bit fingerprints whose clustering (delta = 0.7) gives TV-HIER-1's hierarchy: sim(a,b) = .625 (bin 6),
#: c at similarity .375 / 0 from them (root bin 0); sim(e,f) = .875 > delta, so i2 is one merged leaf
TV1_FINGERPRINTS = {"a": 0b00000000, "b": 0b00000111, "c": 0b11111000, "e": 0b00000000, "f": 0b00000001}


@pytest.mark.parametrize("top", ["uniform", "depth"])
def test_tv_hier_1_built_from_fingerprints(top: str) -> None:
    qrels, run = qrels_of(TV1_QRELS), run_of(TV1_RUN)
    fp = DocumentVectors.build(list(TV1_FINGERPRINTS), list(TV1_FINGERPRINTS.values()), bits=8)
    extra = "" if top == "uniform" else ",top=depth"
    built = [f"{m}(delta=0.7{extra})@5" for m in ("N_rec", "D_nDCG_LA", "HD_nDCG", "HDsharp_nDCG", "LADsharp_nDCG",
                                                  "alpha_nDCG_LA", "ERR_IA_LA")]
    given = [n.replace(f"delta=0.7{extra}", "h=given") for n in built]
    a = scores(qrels, run, built, {"fingerprints": fp})
    b = scores(qrels, run, given, {"hierarchy": tv1(top)})
    for x, y in zip(built, given):
        assert value(a, x) == pytest.approx(value(b, y), abs=1e-12), x
    if top == "uniform":
        assert value(a, built[3]) == pytest.approx(0.874680, abs=EXACT)
    else:
        assert value(a, built[3]) == pytest.approx(0.904185, abs=EXACT)


# -- TV-HIER-2 ------------------------------------------------------------------------------------------------


def tv2() -> tuple[Qrels, Hierarchies]:
    qrels = qrels_of("".join(f"q {t} {d} 1\n" for t, ds in {"i1": "d1 d4 d5", "i2": "d1 d2", "i3": "d3"}.items()
                             for d in ds.split()))
    nodes = (
        Node("i1", None, 1, "intent", ("i1",), ("d1", "d4", "d5")),
        Node("i2", None, 1, "intent", ("i2",), ("d1", "d2")),
        Node("i3", None, 1, "intent", ("i3",), ("d3",)),
        Node("i1a", "i1", 2, "leaf", ("i1",), ("d1", "d4")),
        Node("i1b", "i1", 2, "leaf", ("i1",), ("d5",)),
        Node("i2a", "i2", 2, "leaf", ("i2",), ("d1",)),
        Node("i2b", "i2", 2, "leaf", ("i2",), ("d2",)),
        Node("i3@2", "i3", 2, "dummy", ("i3",), ("d3",)),
    )
    return qrels, Hierarchies({"q": TopicHierarchy("q", nodes)})  # no weights: WI, uniform over intents


def test_tv_hier_2() -> None:
    qrels, bare = tv2()
    hierarchies = from_json(to_json(bare).replace(', "weight": 0.0', ""))  # weights computed on reading (WI)
    assert [n.weight for n in hierarchies["q"].layers[1]] == pytest.approx([1 / 6] * 4 + [1 / 3])
    names = ["Dsharp_nDCG@10", "I_rec@10", "D_nDCG@10", "N_rec(h=given)@10", "HD_nDCG(h=given)@10",
             "HDsharp_nDCG(h=given)@10"]
    filler = [f"n{i}" for i in range(1, 8)]
    run1 = scores(qrels, run_of({"q": [*filler, "d1", "d2", "d3"]}), names, {"hierarchy": hierarchies})
    run2 = scores(qrels, run_of({"q": [*filler, "d1", "d3", "d4"]}), names, {"hierarchy": hierarchies})
    for result in (run1, run2):
        assert value(result, "Dsharp_nDCG@10") == pytest.approx(0.654620, abs=EXACT)
        assert value(result, "I_rec@10") == 1.0
        assert value(result, "D_nDCG@10") == pytest.approx(0.309241, abs=EXACT)
    for result, expected in ((run1, (0.875, 0.316772, 0.595886)), (run2, (0.75, 0.317731, 0.533865))):
        got = [value(result, n) for n in names[3:]]
        np.testing.assert_allclose(got, expected, atol=EXACT)
    assert value(run1, names[5]) > value(run2, names[5])


# -- generated inputs: reductions, oracle, ideal ------------------------------------------------------------


def generated(seed: int) -> tuple[Qrels, list[Run], DocumentVectors]:
    rng = random.Random(seed)
    lines = []
    topics = ("t1", "t2", "t3", "t4")
    for topic in topics:
        for intent in ("1", "2", "3", "4", "5"):
            for doc in rng.sample(range(30), rng.randint(0, 10)):
                lines.append(f"{topic} {intent} d{doc:02d} {rng.choice([0, 1, 1, 2, 3, -2])}\n")
    lines.append("t5 1 d00 0\n")  # a judged topic without relevant documents
    qrels = qrels_of("".join(lines))
    runs = []
    for r in range(3):
        ranking = {t: [f"d{d:02d}" for d in rng.sample(range(34), rng.randint(0, 25))] for t in (*topics, "t5")}
        text = "".join(f"{t} Q0 {d} {i} {rng.choice([1.0, 2.0, 3.0, 4.0])} r{r}\n"
                       for t, docs in ranking.items() for i, d in enumerate(docs, 1))
        runs.append(read_run(Blob.from_bytes(text.encode(), f"run{r}")))
    nrng = np.random.default_rng(seed)
    docnos = [f"d{d:02d}" for d in range(34)]
    return qrels, runs, DocumentVectors.build(docnos, nrng.integers(0, 2**12, size=34), bits=12)


FLAT_PAIRS = [
    ("I_rec_LA{}@10", "I_rec@10"),
    ("alpha_nDCG_LA{}@10", "alpha_nDCG@10"),
    ("ERR_IA_LA{}@10", "ERR_IA(variant=paper)@10"),
    ("Q_IA_LA{}@10", "Q_IA@10"),
    ("Q_IA_LA{}", "Q_IA"),
    ("D_nDCG_LA{}@10", "D_nDCG@10"),
    ("Dsharp_nDCG_LA{}@10", "Dsharp_nDCG@10"),
    ("D_Q_LA{}@10", "D_Q@10"),
    ("Dsharp_Q_LA{}@10", "Dsharp_Q@10"),
    ("N_rec{}@10", "I_rec@10"),
    ("HD_nDCG{}@10", "D_nDCG@10"),
    ("HD_nDCG{}@3", "D_nDCG@3"),
    ("HD_Q{}@10", "D_Q@10"),
    ("HDsharp_nDCG{}@10", "Dsharp_nDCG@10"),
    ("HDsharp_Q{}@10", "Dsharp_Q@10"),
    ("LADsharp_nDCG{}@10", "Dsharp_nDCG@10"),
    ("LADsharp_Q{}@10", "Dsharp_Q@10"),
]


@pytest.mark.parametrize("hierarchy", ["(delta=0)", "(h=FLAT)", "(h=WD,delta=0)", "(h=SUP)"])
@pytest.mark.parametrize("seed", [1, 2])
def test_flat_hierarchies_give_the_flat_measures(hierarchy: str, seed: int) -> None:
    """Spec 4.9 properties: delta = 0 (and h=FLAT, and SUP without super-intents) reduce every LA measure to the
    flat one, HD to D and N-rec to I-rec; also with given intent weights."""
    qrels, runs, fp = generated(seed)
    weights = IntentWeights({"t1": {"1": 3.0, "2": 1.0, "3": 0.5}, "t2": {"4": 2.0}})
    side = {"fingerprints": fp, "hierarchy": Hierarchies()}
    names = [n for pair in FLAT_PAIRS for n in (pair[0].format(hierarchy), pair[1])]
    for run in runs:
        result = scores(qrels, run, names, side, weights)
        for la, flat in FLAT_PAIRS:
            got = result.values[parse_measure(la.format(hierarchy)).name]
            np.testing.assert_allclose(got, result.values[parse_measure(flat).name], atol=1e-12, err_msg=la)


def test_sup_wi_at_delta_zero_equals_sup() -> None:
    qrels, runs, fp = generated(3)
    groups = {"t1": (SuperIntent("A", ("1", "2")), SuperIntent("B", (SuperIntent("C", ("3", "4")),))),
              "t2": (SuperIntent("A", ("5", "1", "2")),)}
    side = {"fingerprints": fp, "hierarchy": Hierarchies(super_intents=groups)}
    pairs = [("HDsharp_nDCG(h=SUP+WI,delta=0)@10", "HDsharp_nDCG(h=SUP)@10"),
             ("alpha_nDCG_LA(h=SUP+WD,delta=0)@10", "alpha_nDCG_LA(h=SUP)@10"),
             ("N_rec(h=SUP+WI,delta=0)@5", "N_rec(h=SUP)@5")]
    for run in runs:
        result = scores(qrels, run, [n for p in pairs for n in p], side)
        for a, b in pairs:
            np.testing.assert_allclose(result.values[parse_measure(a).name], result.values[parse_measure(b).name],
                                       atol=1e-12, err_msg=a)
    flat = scores(qrels, runs[0], ["N_rec(h=SUP)@5", "I_rec@5"], side)
    assert not np.allclose(flat.values["N_rec(h=SUP)@5"], flat.values["StRecall@5"])  # super nodes count


def grade_table(qrels: Qrels) -> dict[tuple[str, str, str], int]:
    """(topic, intent, docno) -> grade, negative grades 0."""
    grades: dict[tuple[str, str, str], int] = {}
    for t, i, d, g in zip(qrels.topic.tolist(), qrels.intent.tolist(), qrels.doc.tolist(), qrels.grade.tolist()):
        grades[qrels.topics[t], qrels.intents[i], qrels.docnos[d].decode()] = max(g, 0)
    return grades


def node_grade(grades: Mapping[tuple[str, str, str], int], topic: str, node: Node, d: str) -> int:
    """g_v(d): max over the node's intents of g_t(d) for d in docs(v); the topic-level grade without intents."""
    if d not in node.docs:
        return 0
    intents = node.intents or tuple({i for (q, i, doc) in grades if q == topic and doc == d})
    return max((grades.get((topic, t, d), 0) for t in intents), default=0)


def dcg(gains: Sequence[float], k: int) -> float:
    return sum(x / math.log2(r + 2) for r, x in enumerate(gains[:k]))


def ndcg(gain: Callable[[str], float], docs: Sequence[str], judged: set[str], k: int) -> float:
    ideal = dcg(sorted((gain(d) for d in judged), reverse=True), k)
    return dcg([gain(d) for d in docs], k) / ideal if ideal > 0 else 0.0


def topic_oracle(grades: Mapping[tuple[str, str, str], int], topic: str, tree: TopicHierarchy, docs: Sequence[str],
                 k: int) -> dict[str, float]:
    judged = {d for (q, _, d) in grades if q == topic}

    def g(node: Node, d: str) -> int:
        return node_grade(grades, topic, node, d)

    nodes, h = list(tree.nodes), tree.height
    covered = {n.id for n in nodes for d in docs if g(n, d) > 0}
    out = {"N_rec": len(covered) / len(nodes),
           "HD_nDCG": ndcg(lambda d: sum(n.weight * g(n, d) for n in nodes) / h, docs, judged, k),
           "D_nDCG_LA": 0.0, "I_rec_LA": 0.0}
    for layer in tree.layers:
        out["D_nDCG_LA"] += ndcg(lambda d, layer=layer: sum(n.weight * g(n, d) for n in layer),  # type: ignore[misc]
                                 docs, judged, k) / h
        out["I_rec_LA"] += sum(1 for n in layer if n.id in covered) / len(layer) / h
    return out


def oracle(qrels: Qrels, run: Run, hierarchies: Hierarchies, k: int) -> dict[str, dict[str, float]]:
    """N_rec, HD_nDCG (linear gain) and D_nDCG_LA, I_rec_LA transcribed from spec 4.7, topic by topic."""
    grades = grade_table(qrels)
    ranked: dict[str, list[str]] = {}
    ranking = rank_run(run, "trec")
    for row in ranking.order.tolist():
        ranked.setdefault(run.topics[run.topic[row]], []).append(run.docno[row].decode())
    out: dict[str, dict[str, float]] = {"N_rec": {}, "HD_nDCG": {}, "D_nDCG_LA": {}, "I_rec_LA": {}}
    for topic in run.topics:
        if topic not in qrels.topic_index:
            continue
        tree = hierarchies.topics.get(topic)
        values = (topic_oracle(grades, topic, tree, ranked.get(topic, [])[:k], k) if tree is not None
                  else dict.fromkeys(out, 0.0))
        for m, v in values.items():
            out[m][topic] = v
    return out


@pytest.mark.parametrize("seed", [4, 5, 6])
@pytest.mark.parametrize("settings", ["delta=0.5", "h=WD,delta=0.6", "h=TL-WI,delta=0.6", "top=depth,delta=0.7"])
def test_engine_agrees_with_the_literal_definitions(seed: int, settings: str) -> None:
    qrels, runs, fp = generated(seed)
    parsed = dict(kv.split("=") for kv in settings.split(","))
    hs = HierarchySettings(h=parsed.get("h", "WI"), delta=float(parsed["delta"]), top=parsed.get("top", "uniform"))
    built = build_hierarchies(topic_judgments(qrels, intent_slots(qrels)), hs, similarity_function(fp))
    assert any(t.height >= 2 for t in built.topics.values())  # the inputs do make layered hierarchies
    for k in (1, 5, 20):
        names = [f"{m}({settings})@{k}" for m in ("N_rec", "HD_nDCG", "D_nDCG_LA", "I_rec_LA")]
        for run in runs:
            result = scores(qrels, run, names, {"fingerprints": fp})
            expected = oracle(qrels, run, built, k)
            for name in names:
                got = result.per_topic(parse_measure(name).name)
                want = expected[name.split("(")[0]]
                assert got.keys() == want.keys()
                for topic in got:
                    assert got[topic] == pytest.approx(want[topic], abs=CLOSE), (name, topic)


def test_the_ideal_ranking_scores_one() -> None:
    qrels, _, fp = generated(7)
    built = build_hierarchies(topic_judgments(qrels, intent_slots(qrels)), HierarchySettings(delta=0.6),
                              similarity_function(fp))
    grades = grade_table(qrels)
    ideal: dict[str, list[str]] = {}
    for topic, tree in built.topics.items():
        gain: dict[str, float] = {}
        for node in tree.nodes:
            for d in node.docs:
                gain[d] = gain.get(d, 0.0) + node.weight * node_grade(grades, topic, node, d) / tree.height
        ideal[topic] = sorted(gain, key=lambda d: -gain[d])
    names = [f"{m}(delta=0.6)@{k}" for m, k in (("HD_nDCG", 5), ("HD_nDCG", 100), ("N_rec", 100),
                                                 ("HDsharp_nDCG", 100))]
    result = scores(qrels, run_of(ideal), names, {"fingerprints": fp})
    for name in names:
        np.testing.assert_allclose(result.values[name], 1.0, atol=1e-12, err_msg=name)


def test_dummies_skip_leaves_dummy_nodes_out_of_node_recall() -> None:
    qrels, run = qrels_of(TV1_QRELS), run_of(TV1_RUN)
    result = scores(qrels, run, ["N_rec(h=given,dummies=skip)@2", "N_rec(h=given)@2"], {"hierarchy": tv1("uniform")})
    # V without dummies: i1, i2, s11, a, b, c (c is the real leaf pushed down); a and b cover i1, s11, a, b
    assert value(result, "N_rec(h=given,dummies=skip)@2") == pytest.approx(4 / 6)
    assert value(result, "N_rec(h=given)@2") == pytest.approx(4 / 9)


# -- reuse, errors --------------------------------------------------------------------------------------------


def test_exported_hierarchies_are_reused_without_fingerprints() -> None:
    qrels, runs, fp = generated(8)
    names = ["HDsharp_nDCG(delta=0.6)@10", "alpha_nDCG_LA(delta=0.6)@10"]
    built = build_hierarchies(topic_judgments(qrels, intent_slots(qrels)), HierarchySettings(delta=0.6),
                              similarity_function(fp))
    exported = from_json(to_json(built))
    for run in runs:
        a = scores(qrels, run, names, {"fingerprints": fp})
        b = scores(qrels, run, names, {"hierarchy": exported})
        for name in a.values:
            np.testing.assert_array_equal(a.values[name], b.values[name])
    with pytest.raises(MeasureError, match="needs fingerprints"):  # other settings: the file does not apply
        scores(qrels, runs[0], ["HDsharp_nDCG(delta=0.5)@10"], {"hierarchy": exported})


@pytest.mark.parametrize(
    ("name", "side", "says"),
    [
        ("HDsharp_nDCG@20", {}, r"the hierarchy h=WI needs fingerprints \(--fingerprints FILE"),
        ("HDsharp_nDCG(sim=tfidf)@20", {}, r"needs doc texts \(--doc-texts FILE"),
        ("N_rec(h=given)@20", {}, r"h=given needs hierarchy \(--hierarchy FILE"),
        ("N_rec(h=SUP)@20", {}, r"h=SUP needs hierarchy \(--hierarchy FILE"),
        ("N_rec(h=given)@20", {"hierarchy": Hierarchies()}, "has none"),
    ],
)
def test_missing_inputs_are_named(name: str, side: dict[str, Any], says: str) -> None:
    with pytest.raises(MeasureError, match=says):
        scores(qrels_of(TV1_QRELS), run_of(TV1_RUN), [name], side)


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("HD_nDCG(h=FLAT,delta=0.5)@20", "delta=0.5 has no effect with h=FLAT"),
        ("HD_nDCG(h=TL-WI,top=depth)@20", "top=depth has no effect with h=TL-WI"),
        ("HD_nDCG(h=WD,wi=docs)@20", "wi=docs has no effect with h=WD"),
        ("HD_nDCG(wd_gain=global)@20", "wd_gain=global has no effect with h=WI"),
        ("ERR_IA_LA(gmax=2,variant=ndeval)@20", "gmax=2 has no effect with variant=ndeval"),
        ("HD_nDCG(h=XY)@20", "not one of"),
        ("HD_nDCG", "needs a cutoff"),
    ],
)
def test_parameters_are_checked(name: str, says: str) -> None:
    with pytest.raises(MeasureError, match=says):
        parse_measure(name)


def test_canonical_names() -> None:
    assert parse_measure("HDsharp_nDCG(h=WI,delta=0.3,gamma=0.5)@20").name == "HDsharp_nDCG@20"
    assert parse_measure("alpha_nDCG_LA(h=TL-WI)@20").name == "alpha_nDCG_LA(h=TL-WI)@20"
    assert parse_measure("LA_alpha_nDCG(delta=0.50,h=SUP+WI)@20").name == "alpha_nDCG_LA(h=SUP+WI,delta=0.5)@20"

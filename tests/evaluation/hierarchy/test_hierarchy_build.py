"""Building hierarchies (spec 4.2-4.6, 4.8): TV-HIER-BUILD-1 step by step (SimHash similarities, complete linkage
with the tie rule, pruning at four deltas, compression, extension, WI and WD shares), the papers' weight
examples, determinism, and the edge cases of the spec (one document, delta = 0 and 1, all-equal similarities,
topic-level roots, super-intents with dummies, missing fingerprints)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from evaluation.docsim import DocumentVectors
from evaluation.formats import Blob, read_qrels
from evaluation.hierarchy import (
    Cluster,
    HierarchySettings,
    SuperIntent,
    TopicJudgments,
    build_hierarchies,
    build_topic,
    check_layers,
    complete_linkage,
    compress,
    depth_top_weights,
    prune,
    similarity_bin,
    sub_intent_tree,
    to_json,
    topic_judgments,
)
from evaluation.hierarchy.prepare import similarity_function
from evaluation.intent_ranking import intent_slots

EXACT = 1e-6

# -- TV-HIER-BUILD-1 ------------------------------------------------------------------------------------------

DOCS = ("d1", "d2", "d3", "d4", "d5", "d6")
FINGERPRINTS = ("00111111", "01110010", "00011111", "11001011", "00011001", "01110001")
TABLE = [
    [1, .500, .875, .375, .625, .500],
    [.500, 1, .375, .375, .375, .750],
    [.875, .375, 1, .500, .750, .375],
    [.375, .375, .500, 1, .500, .375],
    [.625, .375, .750, .500, 1, .625],
    [.500, .750, .375, .375, .625, 1],
]
GRADES = (1, 2, 1, 1, 2, 1)


def vectors() -> DocumentVectors:
    return DocumentVectors.build(list(DOCS), [int(f, 2) for f in FINGERPRINTS], bits=8)


def similarity() -> np.ndarray:
    return similarity_function(vectors())(DOCS)


def describe(tree: Cluster) -> str:
    return tree.describe(DOCS)


def one_intent(docs: tuple[str, ...] = DOCS, grades: tuple[int, ...] = GRADES) -> TopicJudgments:
    return TopicJudgments("q", ("t",), (1.0,), (docs,), (grades,), docs, grades)


def test_simhash_similarities() -> None:
    np.testing.assert_allclose(similarity(), TABLE, atol=EXACT)


def test_complete_linkage_merges_and_the_tie_rule() -> None:
    raw = complete_linkage(similarity())
    # (d1,d3)@.875, (d2,d6)@.75, (d5,{d1,d3})@.625, then the three-way tie at .375 goes to ({d1,d3,d5},{d2,d6})
    assert describe(raw) == "n(.375)[d4, n(.375)[n(.750)[d2, d6], n(.625)[d5, n(.875)[d1, d3]]]]"
    tied = raw.children[1]
    assert tied.members == (0, 1, 2, 4, 5) and tied.sim == 0.375


@pytest.mark.parametrize(
    ("delta", "pruned", "compressed", "depth"),
    [
        (0.7, "n(.375)[d4, n(.375)[{d2,d6}, n(.625)[d5, {d1,d3}]]]", "n(.375)[d4, {d2,d6}, n(.625)[d5, {d1,d3}]]", 2),
        (0.5, "n(.375)[d4, n(.375)[{d2,d6}, {d1,d3,d5}]]", "n(.375)[d4, {d2,d6}, {d1,d3,d5}]", 1),
        (0.8, "n(.375)[d4, n(.375)[n(.750)[d2, d6], n(.625)[d5, {d1,d3}]]]",
         "n(.375)[d4, n(.750)[d2, d6], n(.625)[d5, {d1,d3}]]", 2),
        (0.3, "{d1,d2,d3,d4,d5,d6}", "{d1,d2,d3,d4,d5,d6}", 0),
        (0.0, "{d1,d2,d3,d4,d5,d6}", "{d1,d2,d3,d4,d5,d6}", 0),
    ],
)
def test_pruning_and_compression(delta: float, pruned: str, compressed: str, depth: int) -> None:
    raw = complete_linkage(similarity())
    assert describe(prune(raw, delta)) == pruned
    tree = compress(prune(raw, delta))
    assert describe(tree) == compressed and tree.depth() == depth
    assert describe(sub_intent_tree(similarity(), delta)) == compressed


def layout(settings: HierarchySettings) -> list[tuple[int, str, str, str, float]]:
    built = build_topic(one_intent(), settings, similarity_function(vectors()))
    return [(n.layer, n.kind, n.id, ",".join(n.docs), n.weight) for n in built.nodes]


def test_extension_and_wi_shares_at_delta_07() -> None:
    rows = layout(HierarchySettings(h="WI", delta=0.7))
    expected = [
        (1, "intent", "i:t", "d1,d2,d3,d4,d5,d6", 1.0),
        (2, "dummy", "i:t/0@2", "d4", 0.25),  # dummy above d4
        (2, "dummy", "i:t/1@2", "d2,d6", 0.25),  # dummy above {d2,d6}
        (2, "cluster", "i:t/2", "d1,d3,d5", 0.5),
        (3, "leaf", "i:t/0", "d4", 0.25),
        (3, "leaf", "i:t/1", "d2,d6", 0.25),
        (3, "leaf", "i:t/2.0", "d5", 0.25),
        (3, "leaf", "i:t/2.1", "d1,d3", 0.25),
    ]
    assert [r[:4] for r in rows] == [e[:4] for e in expected]
    np.testing.assert_allclose([r[4] for r in rows], [e[4] for e in expected], atol=1e-12)


def test_wd_shares_at_delta_07() -> None:
    rows = {r[2]: r[4] for r in layout(HierarchySettings(h="WD", delta=0.7))}  # G(root) = 8
    expected = {"i:t/1@2": 3 / 8, "i:t/0@2": 1 / 8, "i:t/2": 4 / 8, "i:t/2.0": 2 / 8, "i:t/2.1": 2 / 8,
                "i:t/1": 3 / 8, "i:t/0": 1 / 8}
    for node, weight in expected.items():
        assert rows[node] == pytest.approx(weight, abs=1e-12), node


def test_other_deltas_give_the_listed_trees() -> None:
    assert [(r[0], r[3]) for r in layout(HierarchySettings(delta=0.5))] == [
        (1, "d1,d2,d3,d4,d5,d6"), (2, "d4"), (2, "d2,d6"), (2, "d1,d3,d5")]
    assert [(r[0], r[3]) for r in layout(HierarchySettings(delta=0.8))] == [
        (1, "d1,d2,d3,d4,d5,d6"), (2, "d4"), (2, "d2,d6"), (2, "d1,d3,d5"),
        (3, "d4"), (3, "d2"), (3, "d6"), (3, "d5"), (3, "d1,d3")]
    for delta in (0.3, 0.0):
        assert [(r[0], r[1]) for r in layout(HierarchySettings(delta=delta))] == [(1, "intent")]


def test_fig5_fig6_weights() -> None:
    """DOU19 Fig. 5 (WI: 2 of 3 leaves -> 2/3, each leaf 1/3) and Fig. 6c (depths 2 and 1 -> 2/3 and 1/3)."""
    sim = np.array([[1, .25, 0], [.25, 1, 0], [0, 0, 1]])  # d1, d2 close; d3 apart (bins 2 and 0)
    built = build_topic(one_intent(DOCS[:3], (1, 1, 1)), HierarchySettings(delta=0.3), lambda docs: sim)
    weights = {",".join(n.docs): n.weight for n in built.nodes if n.layer == 2}
    assert weights == pytest.approx({"d1,d2": 2 / 3, "d3": 1 / 3})
    assert [n.weight for n in built.nodes if n.layer == 3] == pytest.approx([1 / 3] * 3)
    assert depth_top_weights({"intent-1": 2, "intent-2": 1}) == pytest.approx({"intent-1": 2 / 3, "intent-2": 1 / 3})
    assert depth_top_weights({"a": 0, "b": 0}) == {"a": 0.5, "b": 0.5}  # the max(depth, 1) guard


# -- bins, ties, determinism ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("s", "b"), [(0.0, 0), (0.0999, 0), (0.1, 1), (0.3, 3), (0.7, 7), (0.8999, 8), (0.9, 9),
                                      (1.0, 9), (1 - 3 / 8, 6)])
def test_similarity_bins(s: float, b: int) -> None:
    assert similarity_bin(s) == b


def test_all_equal_similarities_merge_by_smallest_docnos() -> None:
    tree = complete_linkage(np.full((4, 4), 0.5))
    # (0,1), then ({0,1}, 2), then (.., 3): each time the pair with the smallest smallest-docnos
    assert tree.describe() == "n(.500)[3, n(.500)[2, n(.500)[0, 1]]]"
    assert compress(tree).describe() == "n(.500)[3, 2, 0, 1]"


def random_qrels(seed: int) -> str:
    rng = random.Random(seed)
    lines = []
    for topic in ("t1", "t2", "t3"):
        for intent in ("1", "2", "3", "4"):
            for doc in rng.sample(range(40), rng.randint(0, 12)):
                lines.append(f"{topic} {intent} doc{doc:02d} {rng.choice([0, 1, 1, 2, 3])}\n")
    return "".join(lines)


@pytest.mark.parametrize("h", ["WI", "WD", "TL-WI", "TL-WD", "FLAT"])
def test_deterministic_and_independent_of_input_order(h: str) -> None:
    text = random_qrels(5)
    qrels = read_qrels(Blob.from_bytes(text.encode(), "q"))
    lines = text.splitlines(keepends=True)
    random.Random(1).shuffle(lines)
    shuffled = read_qrels(Blob.from_bytes("".join(lines).encode(), "q"))
    rng = np.random.default_rng(3)
    docnos = [f"doc{i:02d}" for i in range(40)]
    values = rng.integers(0, 2**16, size=40)
    fp = DocumentVectors.build(docnos, values, bits=16)
    fp_reversed = DocumentVectors.build(docnos[::-1], values[::-1], bits=16)
    settings = HierarchySettings(h=h, delta=0.6)
    a = build_hierarchies(topic_judgments(qrels, intent_slots(qrels)), settings, similarity_function(fp))
    b = build_hierarchies(topic_judgments(qrels, intent_slots(qrels)), settings, similarity_function(fp))
    c = build_hierarchies(topic_judgments(shuffled, intent_slots(shuffled)), settings,
                          similarity_function(fp_reversed))
    assert to_json(a) == to_json(b) == to_json(c)
    for tree in a.topics.values():
        assert not check_layers(tree)
        bottom = tree.height
        parents = {n.parent for n in tree.nodes}
        assert all(n.layer == bottom for n in tree.nodes if n.id not in parents)  # every leaf at the bottom


# -- edge cases -----------------------------------------------------------------------------------------------


def test_one_document_is_a_single_leaf_and_empty_intents_are_dropped() -> None:
    qrels = read_qrels(Blob.from_bytes(b"q 1 a 1\nq 2 b 0\nq 2 c 0\nq 3 c 2\nq 3 d 1\n", "q"))
    judged = topic_judgments(qrels, intent_slots(qrels))["q"]
    assert judged.intents == ("1", "3")  # intent 2 has no relevant document (spec 4.2 step 4, 1.4)
    built = build_topic(judged, HierarchySettings(delta=1.0), lambda docs: np.eye(len(docs)))
    layers = [[(n.id, n.kind, n.docs) for n in layer] for layer in built.layers]
    assert layers == [
        [("i:1", "intent", ("a",)), ("i:3", "intent", ("c", "d"))],
        [("i:1@2", "dummy", ("a",)), ("i:3/0", "leaf", ("c",)), ("i:3/1", "leaf", ("d",))],
    ]
    assert [n.weight for n in built.layers[1]] == [0.5, 0.25, 0.25]


def test_delta_one_keeps_every_document_apart() -> None:
    tree = sub_intent_tree(similarity(), 1.0)
    assert sorted(len(leaf.members) for leaf in tree.leaves()) == [1] * 6


def test_delta_zero_collapses_even_a_root_at_similarity_zero() -> None:
    assert prune(complete_linkage(np.eye(3)), 0.0).is_leaf
    assert not prune(complete_linkage(np.eye(3)), 1e-9).is_leaf


def test_topic_level_hierarchies() -> None:
    judged = one_intent()
    tl = build_topic(judged, HierarchySettings(h="TL-WI", delta=0.7), similarity_function(vectors()))
    # the clustering root is the topic: its children (d4, {d2,d6}, n(.625)) form layer 1
    assert [(n.layer, n.docs) for n in tl.nodes] == [
        (1, ("d4",)), (1, ("d2", "d6")), (1, ("d1", "d3", "d5")),
        (2, ("d4",)), (2, ("d2", "d6")), (2, ("d5",)), (2, ("d1", "d3"))]
    assert all(n.intents == () for n in tl.nodes)
    assert [n.weight for n in tl.layers[0]] == pytest.approx([0.25, 0.25, 0.5])
    wd = build_topic(judged, HierarchySettings(h="TL-WD", delta=0.7), similarity_function(vectors()))
    assert [n.weight for n in wd.layers[0]] == pytest.approx([1 / 8, 3 / 8, 4 / 8])
    # a root that is a single leaf (pruned away, or one relevant document) is the one node of layer 1
    flat = build_topic(judged, HierarchySettings(h="TL-WI", delta=0.3), similarity_function(vectors()))
    assert [(n.id, n.layer, n.weight, len(n.docs)) for n in flat.nodes] == [("t/0", 1, 1.0, 6)]


def test_super_intents_with_dummies() -> None:
    qrels = read_qrels(Blob.from_bytes(b"q 1 a 1\nq 2 b 1\nq 3 c 2\nq 4 d 1\n", "q"))
    judged = topic_judgments(qrels, intent_slots(qrels))["q"]
    groups = [SuperIntent("A", ("1", "2")), SuperIntent("B", (SuperIntent("C", ("3",)),)),
              SuperIntent("D", ("9",))]  # 9 is no relevant intent: D is dropped; 4 is in no super-intent
    built = build_topic(judged, HierarchySettings(h="SUP"), None, groups)
    assert [[(n.id, n.kind, n.weight) for n in layer] for layer in built.layers] == [
        [("s:A", "super", 0.5), ("s:B", "super", 0.25), ("i:4^1", "dummy", 0.25)],
        [("i:1^2", "dummy", 0.25), ("i:2^2", "dummy", 0.25), ("s:C", "super", 0.25), ("i:4^2", "dummy", 0.25)],
        [("i:1", "intent", 0.25), ("i:2", "intent", 0.25), ("i:3", "intent", 0.25), ("i:4", "intent", 0.25)],
    ]
    assert built.node("s:A").intents == ("1", "2") and built.node("s:A").docs == ("a", "b")


def test_missing_fingerprints_are_dissimilar_to_everything() -> None:
    partial = DocumentVectors.build(["d1", "d3"], [int(FINGERPRINTS[0], 2), int(FINGERPRINTS[2], 2)], bits=8)
    tree = sub_intent_tree(similarity_function(partial)(("d1", "d2", "d3")), 0.5)
    assert tree.describe(("d1", "d2", "d3")) == "n(.000)[d2, {d1,d3}]"


def test_clustered_variants_need_similarities() -> None:
    with pytest.raises(ValueError, match="needs document similarities"):
        build_topic(one_intent(), HierarchySettings(h="WI"), None)
    flat = build_topic(one_intent(), HierarchySettings(h="FLAT"), None)
    assert [(n.id, n.weight) for n in flat.nodes] == [("i:t", 1.0)]

"""Building the hierarchy of a topic (spec 4.2-4.8): one sub-intent tree per official intent (or one tree of the
topic's relevant documents for ``TL``), pruned and compressed (``evaluation.hierarchy.cluster``), assembled under
the root -- with super-intent layers on top for ``SUP`` variants -- extended with dummy nodes so that every leaf
is at the bottom layer, and weighted (``evaluation.hierarchy.weights``).

Construction is deterministic: documents are in docno byte order, clustering ties follow the spec's key rule,
children are listed by (size, smallest docno) and nodes layer by layer in tree order.

**Layers and extension** (4.5). Super-intent layers (s of them, the deepest super-intent chain of the topic's
grouping) come first, official intents at layer s + 1, their trees below; ``h = s + 1 + max_t depth(t)``. A
sub-intent leaf above layer h is pushed down to layer h and every layer from its former one to h - 1 gets a
dummy node with the same documents (a single-child chain); an official intent whose tree is a single leaf keeps
its place and gets dummy copies in the layers below it. An official intent that is not in any super-intent (or
below a shallower one) gets dummy copies above it, so that all official intents share layer s + 1. For ``TL``
the clustering root is the topic: its children form layer 1 (a root that is a single leaf -- one relevant
document, or everything merged by pruning -- becomes the one node of layer 1).

**Node ids** (stable, readable): ``s:<id>`` super-intents; ``i:<intent>`` official intents; ``i:<intent>/0.2``
the node reached from the intent by child positions 0 then 2; ``t/1.0`` likewise below a TL root;
``<id>@<layer>`` a dummy copy of node ``<id>`` in that layer (``i:<intent>^<layer>`` above an intent).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evaluation.formats.lexer import decode
from evaluation.hierarchy.cluster import Cluster, sub_intent_tree
from evaluation.hierarchy.model import Hierarchies, HierarchySettings, Node, NodeKind, SuperIntent, TopicHierarchy
from evaluation.hierarchy.weights import Gain, assign_weights, check_layers, depth_top_weights
from evaluation.intent_ranking import IntentSlots
from evaluation.model import Qrels
from evaluation.problems import OptionError

FloatArray = npt.NDArray[np.float64]
#: the (n, n) similarity matrix of the given docnos (in the given order)
SimilarityFn = Callable[[tuple[str, ...]], FloatArray]


@dataclass(frozen=True)
class TopicJudgments:
    """What building needs of one topic: per official intent with a relevant document (T*, spec 1.4) its weight
    P(t|q) and its relevant documents (sorted docnos) with their grades; the topic-level relevant documents
    (``g(d) = max_t g_t(d) > 0``) with their grades."""

    topic: str
    intents: tuple[str, ...]
    intent_weights: tuple[float, ...]
    intent_docs: tuple[tuple[str, ...], ...]
    intent_grades: tuple[tuple[int, ...], ...]
    docs: tuple[str, ...]
    grades: tuple[int, ...]

    def grade_tables(self) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
        """Per intent docno -> grade, and docno -> topic-level grade."""
        per_intent = {t: dict(zip(d, g)) for t, d, g in zip(self.intents, self.intent_docs, self.intent_grades)}
        return per_intent, dict(zip(self.docs, self.grades))

    def global_gain(self) -> dict[str, float]:
        """GG(d) = sum_t w(t) g_t(d) (spec 3.6) of every relevant document."""
        out: dict[str, float] = {}
        for w, docs, grades in zip(self.intent_weights, self.intent_docs, self.intent_grades):
            for d, g in zip(docs, grades):
                out[d] = out.get(d, 0.0) + w * g
        return out


class _Layers:
    """Nodes collected per layer in tree (depth-first, left-to-right) order."""

    def __init__(self) -> None:
        self.by_layer: dict[int, list[Node]] = {}

    def add(self, node: Node) -> None:
        self.by_layer.setdefault(node.layer, []).append(node)

    def nodes(self) -> tuple[Node, ...]:
        return tuple(n for layer in sorted(self.by_layer) for n in self.by_layer[layer])


def _emit_tree(out: _Layers, tree: Cluster, docnos: Sequence[str], node_id: str, parent: str | None, layer: int,
               bottom: int, intents: tuple[str, ...], kind: NodeKind, prefix: str) -> None:
    """Emit a (pruned, compressed) cluster tree rooted at ``layer``, extending leaves down to ``bottom``.

    ``kind`` is the kind of the tree's root (``intent`` or ``cluster``/``leaf`` for a TL child); ``prefix`` the
    id stem of its descendants (``i:<intent>/`` or ``t/``)."""
    docs = tuple(docnos[m] for m in tree.members)
    if tree.is_leaf:
        if kind == "intent":  # a flat official intent: dummy copies below it
            out.add(Node(node_id, parent, layer, "intent", intents, docs, sim=None))
            above: str | None = node_id
            for lay in range(layer + 1, bottom + 1):
                copy = f"{node_id}@{lay}"
                out.add(Node(copy, above, lay, "dummy", intents, docs))
                above = copy
            return
        above = parent
        for lay in range(layer, bottom):  # a leaf pushed down: dummies in its former and intermediate layers
            copy = f"{node_id}@{lay}"
            out.add(Node(copy, above, lay, "dummy", intents, docs))
            above = copy
        out.add(Node(node_id, above, bottom, "leaf", intents, docs))
        return
    out.add(Node(node_id, parent, layer, kind, intents, docs, sim=tree.sim))
    stem = prefix if kind == "intent" else node_id + "."
    for pos, child in enumerate(tree.children):
        _emit_tree(out, child, docnos, f"{stem}{pos}", node_id, layer + 1, bottom, intents,
                   "leaf" if child.is_leaf else "cluster", stem)


def _intent_tree(docs: tuple[str, ...], settings: HierarchySettings, similarity: SimilarityFn | None) -> Cluster:
    """The pruned, compressed tree of one official intent (a single leaf without clustering)."""
    everything = Cluster(tuple(range(len(docs))))
    if not settings.clustered or settings.topic_level or len(docs) < 2 or settings.delta == 0.0:
        return everything
    if similarity is None:
        raise OptionError(f"h={settings.h} needs document similarities")
    return sub_intent_tree(similarity(docs), settings.delta)


def _super_forest(groups: Sequence[SuperIntent], present: set[str]) -> tuple[SuperIntent, ...]:
    """The grouping restricted to the intents present (T*): super-intents left without intents are dropped."""
    out: list[SuperIntent] = []
    for g in groups:
        kept: list[SuperIntent | str] = []
        for c in g.children:
            if isinstance(c, SuperIntent):
                kept.extend(_super_forest([c], present))
            elif c in present:
                kept.append(c)
        if kept:
            out.append(SuperIntent(g.id, tuple(kept)))
    return tuple(out)


def build_topic(
    judgments: TopicJudgments,
    settings: HierarchySettings,
    similarity: SimilarityFn | None = None,
    super_intents: Sequence[SuperIntent] = (),
) -> TopicHierarchy:
    """The weighted hierarchy of one topic (spec 4.2-4.8). ``similarity`` is needed for clustered variants
    (unless every intent has at most one relevant document); ``super_intents`` for ``SUP`` variants."""
    settings = settings.normalised()
    if settings.h == "given":
        raise OptionError("h=given hierarchies are read, not built")
    if settings.topic_level:
        hierarchy = _topic_level(judgments, settings, similarity)
        depths: dict[str, int] = {}
    else:
        hierarchy, depths = _by_intents(judgments, settings, similarity, super_intents)
    return _weighted(hierarchy, judgments, settings, depths)


def _topic_level(judgments: TopicJudgments, settings: HierarchySettings,
                 similarity: SimilarityFn | None) -> TopicHierarchy:
    docs = judgments.docs
    if not docs:
        return TopicHierarchy(judgments.topic, ())
    if len(docs) >= 2 and settings.delta > 0.0:
        if similarity is None:
            raise OptionError(f"h={settings.h} needs document similarities")
        tree = sub_intent_tree(similarity(docs), settings.delta)
    else:
        tree = Cluster(tuple(range(len(docs))))
    out = _Layers()
    if tree.is_leaf:
        _emit_tree(out, tree, docs, "t/0", None, 1, 1, (), "leaf", "t/")
    else:
        bottom = tree.depth()
        for pos, child in enumerate(tree.children):
            _emit_tree(out, child, docs, f"t/{pos}", None, 1, bottom, (), "leaf" if child.is_leaf else "cluster",
                       "t/")
    return TopicHierarchy(judgments.topic, out.nodes())


def _by_intents(
    judgments: TopicJudgments,
    settings: HierarchySettings,
    similarity: SimilarityFn | None,
    super_intents: Sequence[SuperIntent],
) -> tuple[TopicHierarchy, dict[str, int]]:
    trees = {t: _intent_tree(docs, settings, similarity) for t, docs in zip(judgments.intents, judgments.intent_docs)}
    docs_of = dict(zip(judgments.intents, judgments.intent_docs))
    depths = {t: tree.depth() for t, tree in trees.items()}
    forest = _super_forest(super_intents, set(judgments.intents)) if settings.with_super else ()
    s = max((g.depth() for g in forest), default=0)
    intent_layer = s + 1
    bottom = intent_layer + max(depths.values(), default=0)
    out = _Layers()

    def emit_intent(t: str, parent: str | None, parent_layer: int) -> None:
        above = parent
        for lay in range(parent_layer + 1, intent_layer):  # dummies between a shallow super-intent and t
            copy = f"i:{t}^{lay}"
            out.add(Node(copy, above, lay, "dummy", (t,), docs_of[t]))
            above = copy
        _emit_tree(out, trees[t], docs_of[t], f"i:{t}", above, intent_layer, bottom, (t,), "intent", f"i:{t}/")

    def emit_super(g: SuperIntent, parent: str | None, layer: int) -> None:
        intents = g.intents()
        docs = tuple(sorted({d for t in intents for d in docs_of[t]}, key=lambda d: d.encode("utf-8")))
        node_id = f"s:{g.id}"
        out.add(Node(node_id, parent, layer, "super", intents, docs))
        for c in g.children:
            if isinstance(c, SuperIntent):
                emit_super(c, node_id, layer + 1)
            else:
                emit_intent(c, node_id, layer)

    grouped = {t for g in forest for t in g.intents()}
    for g in forest:
        emit_super(g, None, 1)
    for t in judgments.intents:
        if t not in grouped:
            emit_intent(t, None, 0)
    return TopicHierarchy(judgments.topic, out.nodes()), depths


def _weighted(hierarchy: TopicHierarchy, judgments: TopicJudgments, settings: HierarchySettings,
              depths: Mapping[str, int]) -> TopicHierarchy:
    if not hierarchy.nodes:
        return hierarchy
    per_intent, topic_grade = judgments.grade_tables()
    top = (depth_top_weights(depths) if settings.top == "depth" and depths
           else dict(zip(judgments.intents, judgments.intent_weights)))
    gain: Gain | None = None
    if settings.by_gains:
        if settings.wd_gain == "global":
            gg = judgments.global_gain()

            def gain(node: Node, docno: str) -> float:
                return gg.get(docno, 0.0)
        else:
            def gain(node: Node, docno: str) -> float:
                if not node.intents:
                    return float(topic_grade.get(docno, 0))
                return float(max(per_intent.get(t, {}).get(docno, 0) for t in node.intents))

    weighted = assign_weights(hierarchy, top=None if settings.topic_level else top,
                              scheme="WD" if settings.by_gains else "WI", count=settings.wi, gain=gain)
    bad = check_layers(weighted)
    if bad:  # cannot happen for built hierarchies: documents are partitioned among each tree's leaves
        raise AssertionError(f"topic {judgments.topic}: weights of layer(s) {bad} do not sum to 1")
    return weighted


def build_hierarchies(
    judgments: Mapping[str, TopicJudgments] | Sequence[TopicJudgments],
    settings: HierarchySettings,
    similarity: SimilarityFn | None = None,
    super_intents: Mapping[str, Sequence[SuperIntent]] | None = None,
    name: str = "<hierarchies>",
) -> Hierarchies:
    """The hierarchy of every topic (topics without relevant documents get none)."""
    items = list(judgments.values()) if isinstance(judgments, Mapping) else list(judgments)
    groups = super_intents or {}
    topics: dict[str, TopicHierarchy] = {}
    for j in items:
        built = build_topic(j, settings, similarity, groups.get(j.topic, ()))
        if built.nodes:
            topics[j.topic] = built
    kept = {t: tuple(g) for t, g in groups.items()} if settings.with_super else {}
    return Hierarchies(topics, settings.normalised(), kept, name)


def topic_judgments(qrels: Qrels, slots: IntentSlots) -> dict[str, TopicJudgments]:
    """``TopicJudgments`` of every qrels topic from the qrels and their relevant intents at level 1 (T*, with the
    evaluation's intent weights renormalised over them, spec 1.4)."""
    docnos = decode(qrels.docnos)
    adhoc = qrels.adhoc
    vocab = np.int64(max(1, qrels.docnos.size))
    out: dict[str, TopicJudgments] = {}
    order = np.lexsort((slots.pair_doc, slots.pair_slot))  # per slot, docno order
    slot_bounds = np.searchsorted(slots.pair_slot[order], np.arange(slots.n_slots + 1))
    pair_doc, pair_grade = slots.pair_doc[order].tolist(), slots.pair_grade[order].tolist()
    for q, topic in enumerate(qrels.topics):
        lo, hi = int(slots.slot_offsets[q]), int(slots.slot_offsets[q + 1])
        intents, weights, docs, grades = [], [], [], []
        for s in range(lo, hi):
            a, b = int(slot_bounds[s]), int(slot_bounds[s + 1])
            intents.append(qrels.intents[int(slots.slot_intent[s])])
            weights.append(float(slots.weight[s]))
            docs.append(tuple(docnos[d] for d in pair_doc[a:b]))
            grades.append(tuple(pair_grade[a:b]))
        a, b = int(adhoc.offsets[q]), int(adhoc.offsets[q + 1])
        relevant = np.flatnonzero(adhoc.grade[a:b] >= slots.level) + a
        topic_docs = tuple(docnos[int(d)] for d in (adhoc.key[relevant] - adhoc.topic[relevant] * vocab).tolist())
        out[topic] = TopicJudgments(topic, tuple(intents), tuple(weights), tuple(docs), tuple(grades), topic_docs,
                                    tuple(int(g) for g in adhoc.grade[relevant].tolist()))
    return out

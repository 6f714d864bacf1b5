"""Hierarchies as intent slots: how the hierarchical measures reuse the flat diversity kernels (spec 4.7).

Layer l of a hierarchy, viewed as a flat intent set (its nodes as intents, weights w(v), per-node grades
``g_v(d) = max_{t in src(v)} g_t(d)`` for d in docs(v), the topic-level grade for nodes without intents), is an
``IntentSlots`` exactly like the qrels' own intents -- so every flat measure of section 3 runs on it unchanged and
``M_LA = sum_l w_l M_l`` is a weighted sum of the flat kernels' per-topic values.

All non-root nodes together, each weighted ``w_l * w(v)``, form one more slot set (``combined``), on which
- the global gain of a document is ``sum_l w_l sum_{v in l} w(v) g_v(d) = GG_H(d)``, so D-nDCG / D-Q there are
  HD-nDCG / HD-Q (exact ideal by GG_H included);
- intent recall is node recall, covered nodes over |V| (``N_rec``);
- D#-measures are HD#-measures.

Slots are built once per qrels and hierarchy settings (cached by the preparer for every run); per run only the
hits (relevant retrieved (document, node) pairs) are joined, by ``IntentInputs`` as for flat intents. Nodes none of
whose documents is relevant in the qrels (possible only in hand-made hierarchies) are left out and the weights of
their layer renormalised over the rest, as flat intents without relevant documents are (spec 1.4).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evaluation.hierarchy.model import Hierarchies, HierarchySettings
from evaluation.intent_ranking import IntentInputs, IntentSlots
from evaluation.judged_ranking import JudgedRanking
from evaluation.model import FloatArray, IntArray, Qrels

#: slots are numbered at this relevance level: a node's document is relevant when g_v(d) >= 1 (g_v(d) > 0)
LEVEL = 1


@dataclass(frozen=True, eq=False)
class LayeredSlots:
    """Per qrels topic: the height of its hierarchy (0: none) and the layer weights w_l = 1/h; per layer the
    slots of its nodes; ``combined`` every node (weights w_l w(v)) with ``dummy`` flags."""

    height: IntArray
    layer_weight: FloatArray  # (max height, qrels topics)
    layers: tuple[IntentSlots, ...]
    combined: IntentSlots
    dummy: np.ndarray  # per combined slot

    @property
    def max_height(self) -> int:
        return len(self.layers)


def _entries(qrels: Qrels, topic_index: IntArray, docnos: np.ndarray) -> IntArray:
    """The ad hoc entry (index into ``qrels.adhoc``) of each (topic, docno), -1 when not judged."""
    adhoc = qrels.adhoc
    out = np.full(docnos.size, -1, dtype=np.int64)
    if docnos.size == 0 or qrels.docnos.size == 0:
        return out
    at = np.minimum(np.searchsorted(qrels.docnos, docnos), qrels.docnos.size - 1)
    known = qrels.docnos[at] == docnos
    key = topic_index * np.int64(qrels.docnos.size) + at
    pos = np.minimum(np.searchsorted(adhoc.key, key), max(adhoc.key.size - 1, 0))
    found = known & (adhoc.key.size > 0) & (adhoc.key[pos] == key)
    out[found] = pos[found]
    return out


def layered_slots(hierarchies: Hierarchies, qrels: Qrels) -> LayeredSlots:
    """Intent slots of every layer of every topic's hierarchy, and of all nodes together."""
    n_topics = len(qrels.topics)
    node_topic: list[int] = []
    node_layer: list[int] = []
    node_weight: list[float] = []
    node_dummy: list[bool] = []
    intent_of: list[list[int]] = []  # qrels intent indices of each node (empty: topic-level grades)
    pair_node: list[int] = []
    pair_docno: list[str] = []
    height = np.zeros(n_topics, dtype=np.int64)
    intent_index = {label: i for i, label in enumerate(qrels.intents)}
    for q, topic in enumerate(qrels.topics):
        tree = hierarchies.topics.get(topic)
        if tree is None or not tree.nodes:
            continue
        height[q] = tree.height
        for node in tree.nodes:
            k = len(node_topic)
            node_topic.append(q)
            node_layer.append(node.layer)
            node_weight.append(node.weight)
            node_dummy.append(node.kind == "dummy")
            intent_of.append([intent_index.get(t, -1) for t in node.intents])
            pair_node.extend([k] * len(node.docs))
            pair_docno.extend(node.docs)
    nodes_topic = np.array(node_topic, dtype=np.int64)
    pairs_node = np.array(pair_node, dtype=np.int64)
    docnos = np.array([d.encode("utf-8") for d in pair_docno], dtype=bytes) if pair_docno else np.zeros(0, "S1")
    entry = _entries(qrels, nodes_topic[pairs_node] if pairs_node.size else pairs_node, docnos)
    grade = _node_grades(qrels, entry, pairs_node, intent_of)
    keep = grade >= LEVEL
    pairs_node, entry, grade = pairs_node[keep], entry[keep], grade[keep]
    layer = np.array(node_layer, dtype=np.int64)
    weight = np.array(node_weight, dtype=np.float64)
    max_h = int(height.max()) if height.size else 0
    layer_weight = np.zeros((max_h, n_topics))
    for lay in range(1, max_h + 1):
        layer_weight[lay - 1] = np.where(height >= lay, 1.0 / np.maximum(height, 1), 0.0)
    renormed = _renormalise(weight, nodes_topic * np.int64(max_h + 1) + layer, pairs_node)
    layers = tuple(
        _slots(qrels, nodes_topic, renormed, layer == lay, pairs_node, entry, grade)
        for lay in range(1, max_h + 1)
    )
    flat_weight = renormed * (layer_weight[layer - 1, nodes_topic] if layer.size else renormed)
    everything = np.ones(layer.size, dtype=bool)
    combined = _slots(qrels, nodes_topic, flat_weight, everything, pairs_node, entry, grade)
    live = np.zeros(layer.size, dtype=bool)
    live[pairs_node] = True
    dummy = np.array(node_dummy, dtype=bool)[live] if layer.size else np.zeros(0, dtype=bool)
    return LayeredSlots(height, layer_weight, layers, combined, dummy)


def _node_grades(qrels: Qrels, entry: IntArray, pair_node: IntArray, intent_of: list[list[int]]) -> IntArray:
    """g_v(d) of every (node, document) pair: the maximum over the node's intents of the document's per-intent
    grade (0 where not judged; negative grades count 0); the topic-level grade for nodes without intents."""
    adhoc = qrels.adhoc
    out = np.zeros(entry.size, dtype=np.int64)
    judged = entry >= 0
    counts = np.array([len(i) for i in intent_of], dtype=np.int64)
    topic_level = judged & (counts[pair_node] == 0) if pair_node.size else judged
    out[topic_level] = adhoc.grade[entry[topic_level]]
    by_intent = np.flatnonzero(judged & ~topic_level)
    if by_intent.size:
        per_pair = counts[pair_node[by_intent]]
        flat_intents = np.array([t for i in intent_of for t in i], dtype=np.int64)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        first = starts[pair_node[by_intent]]
        spread = np.arange(int(per_pair.sum())) - np.repeat(np.cumsum(per_pair) - per_pair, per_pair)
        intent = flat_intents[np.repeat(first, per_pair) + spread]
        row_entry = np.repeat(entry[by_intent], per_pair)
        # qrels rows are sorted by (topic, doc, intent): entry e owns rows row_start[e]:row_start[e+1]
        n_intents = np.int64(max(1, len(qrels.intents)))
        row_key = _row_entries(qrels) * n_intents + qrels.intent
        want = row_entry * n_intents + intent
        at = np.minimum(np.searchsorted(row_key, want), max(row_key.size - 1, 0))
        hit = (intent >= 0) & (row_key.size > 0) & (row_key[at] == want)
        value = np.where(hit, qrels.grade[at], 0)
        out[by_intent] = np.maximum.reduceat(value, np.concatenate(([0], np.cumsum(per_pair)[:-1])))
    return np.maximum(out, 0)


def _row_entries(qrels: Qrels) -> IntArray:
    """The ad hoc entry of every qrels row."""
    starts = qrels.adhoc.row_start
    return (np.searchsorted(starts, np.arange(len(qrels)), side="right") - 1).astype(np.int64)


def _renormalise(weight: FloatArray, group: IntArray, pair_node: IntArray) -> FloatArray:
    """Node weights divided by the sum over the nodes of their (topic, layer) that have a relevant document."""
    live = np.zeros(weight.size, dtype=bool)
    live[pair_node] = True
    if not weight.size:
        return weight
    _, inverse = np.unique(group, return_inverse=True)
    total = np.bincount(inverse.ravel(), weights=np.where(live, weight, 0.0))
    per = total[inverse.ravel()]
    return np.where(live & (per > 0), weight / np.where(per > 0, per, 1.0), 0.0)


def _slots(qrels: Qrels, node_topic: IntArray, weight: FloatArray, chosen: np.ndarray, pair_node: IntArray,
           entry: IntArray, grade: IntArray) -> IntentSlots:
    """The slots of the chosen nodes that have a relevant document, in node order (topic, layer, tree order)."""
    live = np.zeros(chosen.size, dtype=bool)
    live[pair_node] = True
    nodes = np.flatnonzero(chosen & live)
    slot_of_node = np.full(chosen.size, -1, dtype=np.int64)
    slot_of_node[nodes] = np.arange(nodes.size)
    take = slot_of_node[pair_node] >= 0 if pair_node.size else np.zeros(0, dtype=bool)
    p_slot, p_entry, p_grade = slot_of_node[pair_node[take]], entry[take], grade[take]
    order = np.lexsort((p_slot, p_entry))
    p_slot, p_entry, p_grade = p_slot[order], p_entry[order], p_grade[order]
    n_slots = nodes.size
    slot_topic = node_topic[nodes]
    adhoc = qrels.adhoc
    max_grade = np.zeros(n_slots)
    np.maximum.at(max_grade, p_slot, p_grade)
    vocab = np.int64(max(1, qrels.docnos.size))
    return IntentSlots(
        LEVEL,
        slot_topic.astype(np.int64),
        np.arange(n_slots, dtype=np.int64),
        np.searchsorted(slot_topic, np.arange(len(qrels.topics) + 1)).astype(np.int64),
        np.bincount(p_slot, minlength=n_slots).astype(np.float64),
        max_grade,
        np.asarray(weight[nodes], dtype=np.float64),
        np.searchsorted(p_entry, np.arange(adhoc.grade.size + 1)).astype(np.int64),
        p_slot.astype(np.int64),
        p_grade.astype(np.int64),
        (adhoc.key[p_entry] - adhoc.topic[p_entry] * vocab).astype(np.int64),
    )


@dataclass(frozen=True, eq=False)
class RunLayers:
    """One run joined with a hierarchy: per layer and for all nodes together an ``IntentInputs`` the flat kernels
    read (at relevance level 1), and each layer's weight per evaluated topic."""

    layers: tuple[IntentInputs, ...]
    combined: IntentInputs
    layer_weight: FloatArray  # (layers, evaluated topics)
    dummy: np.ndarray  # per combined slot

    @property
    def n_topics(self) -> int:
        return self.combined.n_topics


def _fixed(slots: IntentSlots) -> Callable[[int], IntentSlots]:
    def at(level: int) -> IntentSlots:
        if level != LEVEL:
            # internal: hierarchy slots are only asked for at level 1
            raise ValueError("hierarchy slots are numbered at relevance level 1")
        return slots

    return at


class HierarchyInputs:
    """The prepared input of the hierarchical measures for one run: ``view(settings)`` joins the run with the
    hierarchies built (or read) with those settings, once per run and settings."""

    def __init__(self, docs: JudgedRanking, qrels: Qrels,
                 provider: Callable[[HierarchySettings], LayeredSlots]) -> None:
        self.docs = docs
        self.qrels = qrels
        self._provider = provider
        self._views: dict[HierarchySettings, RunLayers] = {}

    @property
    def n_topics(self) -> int:
        return self.docs.n_topics

    def view(self, settings: HierarchySettings) -> RunLayers:
        key = settings.normalised()
        found = self._views.get(key)
        if found is None:
            found = self._views[key] = self._join(self._provider(key))
        return found

    def _join(self, slots: LayeredSlots) -> RunLayers:
        layers = tuple(IntentInputs(self.docs, self.qrels, _fixed(s)) for s in slots.layers)
        combined = IntentInputs(self.docs, self.qrels, _fixed(slots.combined))
        qrels_topic = np.array([self.qrels.topic_index.get(t, -1) for t in self.docs.topics], dtype=np.int64)
        padded = np.concatenate((slots.layer_weight, np.zeros((slots.max_height, 1))), axis=1)
        return RunLayers(layers, combined, padded[:, qrels_topic], slots.dummy)

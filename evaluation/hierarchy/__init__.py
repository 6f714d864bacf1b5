"""Intent hierarchies (spec section 4): the data model, deterministic construction from per-intent (or topic-level)
relevant documents and document similarities, node weights, and JSON import/export.

    from evaluation.hierarchy import HierarchySettings, build_hierarchies, topic_judgments, to_json
    built = build_hierarchies(topic_judgments(qrels, slots), HierarchySettings(h="WI", delta=0.3), similarity)
    text = to_json(built)            # reuse later: --hierarchy FILE, or from_json(text)

``python -m evaluation.hierarchy --qrels Q --fingerprints F -o hierarchies.json`` builds and exports them.
The measures are in ``evaluation.measures.hierarchical``; the side input and prepared input in
``evaluation.hierarchy.prepare`` (not imported here: the side-input machinery imports the measures).
"""

from evaluation.hierarchy.build import SimilarityFn, TopicJudgments, build_hierarchies, build_topic, topic_judgments
from evaluation.hierarchy.cluster import Cluster, complete_linkage, compress, prune, similarity_bin, sub_intent_tree
from evaluation.hierarchy.jsonio import from_json, parse_hierarchies, read_hierarchies, to_json
from evaluation.hierarchy.layered import HierarchyInputs, LayeredSlots, RunLayers, layered_slots
from evaluation.hierarchy.model import Hierarchies, HierarchySettings, Node, SuperIntent, TopicHierarchy
from evaluation.hierarchy.weights import assign_weights, check_layers, depth_top_weights, renormalise_layers

__all__ = [
    "Cluster",
    "Hierarchies",
    "HierarchyInputs",
    "HierarchySettings",
    "LayeredSlots",
    "Node",
    "RunLayers",
    "SimilarityFn",
    "SuperIntent",
    "TopicHierarchy",
    "TopicJudgments",
    "assign_weights",
    "build_hierarchies",
    "build_topic",
    "check_layers",
    "complete_linkage",
    "compress",
    "depth_top_weights",
    "from_json",
    "layered_slots",
    "parse_hierarchies",
    "prune",
    "read_hierarchies",
    "renormalise_layers",
    "similarity_bin",
    "sub_intent_tree",
    "to_json",
    "topic_judgments",
]

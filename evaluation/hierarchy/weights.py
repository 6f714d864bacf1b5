"""Node weights (spec 4.6): top-level weights, WI / WD propagation, super-intent sums, layer checks.

- Official intents get ``top`` weights: P(t|q) (``uniform``; TREC gives none, so 1/|T|) or depth-based
  ``max(depth(t), 1) / sum_u max(depth(u), 1)`` (C-HIER-7).
- A super-intent (and a dummy above an official intent) weighs the sum of its children (C-HIER-11).
- Below an official intent -- or below the root of a topic-level hierarchy, whose weight is 1 -- weights flow
  down: ``w(child) = w(parent) * share(child)``, ``share = n(child)/n(parent)`` for WI, ``n(v)`` = the leaves
  below v (after pruning; a merged group counts once, C-HIER-8) or, with ``wi=docs``, the documents it covers;
  ``share = G(child)/G(parent)`` for WD, ``G(v) = sum_{d in docs(v)} gain(d)`` with the per-intent gain of the
  tree's intent (C-HIER-9) or the global gain GG(d). A dummy has one child with the same documents, so its
  share is 1 under every scheme.

In a well-formed hierarchy the weights of every layer sum to 1 (documents are partitioned among the leaves of an
intent tree); ``check_layers`` asserts it to 1e-9 and ``renormalise_layers`` repairs user-supplied weights.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from evaluation.hierarchy.model import Node, TopicHierarchy
from evaluation.problems import OptionError

#: tolerance of the per-layer sum check (spec 4.6)
LAYER_TOLERANCE = 1e-9

#: per (node, docno): the document's gain for WD (the node's intent grade, the topic-level grade, or GG)
Gain = Callable[[Node, str], float]


def depth_top_weights(depths: Mapping[str, int]) -> dict[str, float]:
    """``max(depth(t), 1) / sum_u max(depth(u), 1)`` (spec 4.6, Fig. 6c: depths 2 and 1 give 2/3 and 1/3)."""
    raw = {t: float(max(d, 1)) for t, d in depths.items()}
    total = sum(raw.values())
    return {t: v / total for t, v in raw.items()}


def assign_weights(
    hierarchy: TopicHierarchy,
    *,
    top: Mapping[str, float] | None = None,
    scheme: str = "WI",
    count: str = "leaves",
    gain: Gain | None = None,
) -> TopicHierarchy:
    """The hierarchy with every node weighted (spec 4.6).

    ``top`` maps official intents to their weights; nodes of kind ``intent`` take them (an intent missing from
    ``top`` weighs 0) and are renormalised to sum to 1. Without intent nodes (topic-level hierarchies) the root
    weighs 1. ``scheme`` is ``WI`` (``count`` = ``leaves`` or ``docs``) or ``WD`` (``gain`` required).
    """
    if scheme not in ("WI", "WD"):
        raise OptionError(f"unknown weighting scheme {scheme!r}")
    if scheme == "WD" and gain is None:
        raise OptionError("WD weights need a gain function")
    children = hierarchy.children
    bottom = hierarchy.height
    size: dict[str | None, float] = {}

    def measure(node: Node) -> float:
        """n(v) (WI) or G(v) (WD), memoised by id."""
        found = size.get(node.id)
        if found is None:
            if scheme == "WD":
                assert gain is not None
                found = sum(gain(node, d) for d in node.docs)
            elif count == "docs":
                found = float(len(node.docs))
            elif node.layer == bottom:
                found = 1.0
            else:
                found = sum(measure(c) for c in children.get(node.id, ()))
            size[node.id] = found
        return found

    weights: dict[str, float] = {}

    def flow(node: Node, weight: float) -> None:
        """Give ``node`` its weight and share it among its children."""
        weights[node.id] = weight
        kids = children.get(node.id, ())
        if not kids:
            return
        parts = [measure(c) for c in kids]
        total = sum(parts)
        for c, part in zip(kids, parts):
            flow(c, weight * part / total if total > 0 else weight / len(kids))

    intents = [n for n in hierarchy.nodes if n.kind == "intent"]
    if not intents:
        roots = children.get(None, ())
        parts = [measure(c) for c in roots]
        total = sum(parts)
        for c, part in zip(roots, parts):
            flow(c, part / total if total > 0 else 1.0 / len(roots))
        return hierarchy.with_weights(weights)

    given = top or {}
    raw = [float(given.get(n.intents[0], 0.0)) if n.intents and top is not None else 1.0 for n in intents]
    total = sum(raw)
    for n, w in zip(intents, raw):
        flow(n, w / total if total > 0 else 1.0 / len(intents))
    # super-intents and the dummies above intents: the sum of their children, bottom-up
    for node in reversed(hierarchy.nodes):
        if node.id not in weights:
            weights[node.id] = sum(weights.get(c.id, 0.0) for c in children.get(node.id, ()))
    return hierarchy.with_weights(weights)


def check_layers(hierarchy: TopicHierarchy, tolerance: float = LAYER_TOLERANCE) -> list[int]:
    """The layers (1-based) whose weights do not sum to 1 within the tolerance."""
    return [i + 1 for i, s in enumerate(hierarchy.layer_sums()) if abs(s - 1.0) > tolerance]


def renormalise_layers(hierarchy: TopicHierarchy) -> TopicHierarchy:
    """Every layer's weights divided by their sum (a layer summing to 0 gets uniform weights)."""
    weights: dict[str, float] = {}
    for layer in hierarchy.layers:
        total = sum(n.weight for n in layer)
        for n in layer:
            weights[n.id] = n.weight / total if total > 0 else 1.0 / len(layer)
    return hierarchy.with_weights(weights)

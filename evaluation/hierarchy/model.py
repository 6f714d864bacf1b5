"""Intent hierarchies (spec 4.1): per topic a rooted tree whose root is the topic itself (never a node of any
measure) and whose non-root nodes sit in layers 1..h, every leaf at layer h (after extension, spec 4.5).

A node records the documents it covers, the official intents it lies below/above (``src(v)``: one intent for a
sub-intent node, the grouped intents for a super-intent node, none for topic-level hierarchies), its layer, its
weight and, for nodes formed by clustering, the complete-linkage similarity at which it was formed. Everything is
frozen; a hierarchy with other weights is a new object (``TopicHierarchy.with_weights``).

``HierarchySettings`` says how hierarchies were (or are to be) built: the spec's ``h=`` variant and the
construction parameters. ``Hierarchies`` is one hierarchy per topic plus the settings that built them; it is
what ``to_json``/``from_json`` of ``evaluation.hierarchy.jsonio`` exchange (that module builds on this one,
never the reverse).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Literal, get_args

from evaluation.problems import OptionError

NodeKind = Literal["super", "intent", "cluster", "leaf", "dummy", "node"]
NODE_KINDS: tuple[str, ...] = get_args(NodeKind)

#: the spec's hierarchy variants (``h=``), plus ``given``: the hierarchies of a hierarchy file as they are
VARIANTS: tuple[str, ...] = ("FLAT", "SUP", "WI", "WD", "SUP+WI", "SUP+WD", "TL-WI", "TL-WD", "given")
#: variants whose sub-intent (or topic-level) layers are built by clustering documents
CLUSTERED: tuple[str, ...] = ("WI", "WD", "SUP+WI", "SUP+WD", "TL-WI", "TL-WD")
#: variants with super-intent layers (read from a hierarchy file)
WITH_SUPER: tuple[str, ...] = ("SUP", "SUP+WI", "SUP+WD")
#: variants built from topic-level judgments, without official intents
TOPIC_LEVEL: tuple[str, ...] = ("TL-WI", "TL-WD")
#: variants weighted by document gains (WD); the others by leaf counts (WI)
BY_GAINS: tuple[str, ...] = ("WD", "SUP+WD", "TL-WD")
#: variants whose top (official intent) weights may be depth-based
WITH_INTENT_TREES: tuple[str, ...] = ("WI", "WD", "SUP+WI", "SUP+WD")

TOPS: tuple[str, ...] = ("uniform", "depth")
SIMS: tuple[str, ...] = ("simhash", "tfidf")
WI_COUNTS: tuple[str, ...] = ("leaves", "docs")
WD_GAINS: tuple[str, ...] = ("intent", "global")


@dataclass(frozen=True)
class HierarchySettings:
    """How hierarchies are built (spec 4.2-4.6, 11.5).

    - ``h``: the variant (``VARIANTS``).
    - ``delta``: pruning threshold, internal nodes with similarity > delta collapse into one leaf (4.3).
    - ``top``: official intents' weights: ``uniform`` = P(t|q) (the evaluation's intent weights, uniform when
      none are given; renormalised over the intents with relevant documents), ``depth`` = proportional to
      max(depth(t), 1) (4.6, Fig. 6c).
    - ``sim``: document similarity, ``simhash`` (fingerprints) or ``tfidf`` (document texts) (4.2).
    - ``wi``: what WI counts below a node: ``leaves`` after pruning (a merged group once; C-HIER-8) or ``docs``.
    - ``wd_gain``: WD's document gain: ``intent`` = the per-intent grade of the tree's intent (C-HIER-9) or
      ``global`` = GG(d) = sum_t w(t) g_t(d) (spec 3.6).
    """

    h: str = "WI"
    delta: float = 0.3
    top: str = "uniform"
    sim: str = "simhash"
    wi: str = "leaves"
    wd_gain: str = "intent"

    def __post_init__(self) -> None:
        for name, value, allowed in (("h", self.h, VARIANTS), ("top", self.top, TOPS), ("sim", self.sim, SIMS),
                                     ("wi", self.wi, WI_COUNTS), ("wd_gain", self.wd_gain, WD_GAINS)):
            if value not in allowed:
                raise OptionError(f"hierarchy setting {name}={value!r}: expected one of {', '.join(allowed)}")
        if not 0.0 <= float(self.delta) <= 1.0:
            raise OptionError(f"hierarchy setting delta={self.delta!r}: expected a number in [0, 1]")
        object.__setattr__(self, "delta", float(self.delta))

    @property
    def clustered(self) -> bool:
        return self.h in CLUSTERED

    @property
    def with_super(self) -> bool:
        return self.h in WITH_SUPER

    @property
    def topic_level(self) -> bool:
        return self.h in TOPIC_LEVEL

    @property
    def by_gains(self) -> bool:
        return self.h in BY_GAINS

    def normalised(self) -> HierarchySettings:
        """The same settings with every value that cannot matter for ``h`` reset to its default, so that equal
        hierarchies have equal settings (cache keys, matching a hierarchy file)."""
        base = HierarchySettings()
        if self.h == "given":
            return HierarchySettings(h="given", delta=base.delta)
        return HierarchySettings(
            h=self.h,
            delta=self.delta if self.clustered else base.delta,
            top=self.top if self.h in WITH_INTENT_TREES else base.top,
            sim=self.sim if self.clustered else base.sim,
            wi=self.wi if self.clustered and not self.by_gains else base.wi,
            wd_gain=self.wd_gain if self.by_gains else base.wd_gain,
        )

    def structure_key(self) -> tuple[object, ...]:
        """What the shape of the hierarchy (not its weights) depends on."""
        n = self.normalised()
        shape = "tl" if n.topic_level else "intents"
        return (shape, n.with_super, n.delta if n.clustered else None, n.sim if n.clustered else None)

    def as_dict(self) -> dict[str, object]:
        n = self.normalised()
        return {"h": n.h, "delta": n.delta, "top": n.top, "sim": n.sim, "wi": n.wi, "wd_gain": n.wd_gain}


@dataclass(frozen=True)
class Node:
    """A non-root node of a hierarchy.

    ``parent`` is the parent's id, None for the children of the root (layer 1). ``docs`` are sorted docnos
    (byte order, as the qrels sort them). ``sim`` is the complete-linkage similarity of a cluster (or of the
    official intent's whole tree), None where there is none (single documents, merged groups, dummies).
    """

    id: str
    parent: str | None
    layer: int
    kind: NodeKind
    intents: tuple[str, ...]
    docs: tuple[str, ...]
    weight: float = 0.0
    sim: float | None = None


@dataclass(frozen=True)
class TopicHierarchy:
    """The hierarchy of one topic: its nodes layer by layer (each layer in tree order)."""

    topic: str
    nodes: tuple[Node, ...]

    def __post_init__(self) -> None:
        layers = [n.layer for n in self.nodes]
        if layers != sorted(layers):
            # internal: readers list nodes by layer (jsonio sorts them, build emits them so)
            raise ValueError("nodes must be listed layer by layer")

    @cached_property
    def height(self) -> int:
        return self.nodes[-1].layer if self.nodes else 0

    @cached_property
    def layers(self) -> tuple[tuple[Node, ...], ...]:
        """Layer l (1-based) at index l - 1."""
        out: list[list[Node]] = [[] for _ in range(self.height)]
        for n in self.nodes:
            out[n.layer - 1].append(n)
        return tuple(tuple(layer) for layer in out)

    @cached_property
    def index(self) -> dict[str, int]:
        return {n.id: i for i, n in enumerate(self.nodes)}

    @cached_property
    def children(self) -> dict[str | None, tuple[Node, ...]]:
        """Children of every node id (None: of the root), in listed order."""
        out: dict[str | None, list[Node]] = {}
        for n in self.nodes:
            out.setdefault(n.parent, []).append(n)
        return {k: tuple(v) for k, v in out.items()}

    def node(self, node_id: str) -> Node:
        return self.nodes[self.index[node_id]]

    def with_weights(self, weights: Mapping[str, float]) -> TopicHierarchy:
        """The same hierarchy with the given weight for every node id."""
        return TopicHierarchy(self.topic, tuple(replace(n, weight=float(weights[n.id])) for n in self.nodes))

    def layer_sums(self) -> tuple[float, ...]:
        """Sum of the node weights of every layer (1 for a well-formed hierarchy, spec 4.6)."""
        return tuple(sum(n.weight for n in layer) for layer in self.layers)

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)


@dataclass(frozen=True)
class SuperIntent:
    """A super-intent (Wang et al. 2016, spec 4.1 ``SUP``): official intents (labels) and nested super-intents
    grouped under one node."""

    id: str
    children: tuple[SuperIntent | str, ...]

    def intents(self) -> tuple[str, ...]:
        """Every official intent below, in listed order."""
        out: list[str] = []
        for c in self.children:
            out.extend(c.intents() if isinstance(c, SuperIntent) else (c,))
        return tuple(out)

    def depth(self) -> int:
        """Layers of super-intents from this one down to its deepest official intent's parent (1 = flat)."""
        return 1 + max((c.depth() for c in self.children if isinstance(c, SuperIntent)), default=0)


@dataclass(frozen=True)
class Hierarchies:
    """One hierarchy per topic, with the settings that built them (None for hand-made ones), and the super-intent
    groupings per topic that a hierarchy file gave (for ``h=SUP`` variants)."""

    topics: Mapping[str, TopicHierarchy] = field(default_factory=dict)
    settings: HierarchySettings | None = None
    super_intents: Mapping[str, tuple[SuperIntent, ...]] = field(default_factory=dict)
    name: str = "<hierarchies>"

    def __getitem__(self, topic: str) -> TopicHierarchy:
        return self.topics[topic]

    def __contains__(self, topic: object) -> bool:
        return topic in self.topics

    def __len__(self) -> int:
        return len(self.topics)

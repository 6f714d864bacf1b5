"""Sub-intent trees from document similarities (spec 4.2-4.4): agglomerative complete-linkage clustering with the
spec's tie rule, pruning at delta, and layer compression in 0.1 bins.

Everything works on a plain similarity matrix (numpy (n, n), documents in docno byte order), so it does not care
where similarities come from (SimHash fingerprints, TF-IDF vectors, a test's table).

**Complete linkage and ties** (4.2, C-HIER-3). Clusters are kept in the row of their smallest member, which is
their smallest docno because rows are in docno order. Each step merges the pair of live clusters with the highest
complete-linkage similarity (the minimum pairwise document similarity across them); among equal similarities
the pair whose key ``(min(a*, b*), max(a*, b*))`` (a*, b* = the clusters' smallest docnos) is smallest. On the
symmetric matrix of live clusters that pair is exactly the first maximum in row-major order (``np.argmax``): its
row is the smallest row holding a maximum, which is the smallest first key component, and its column the smallest
partner. Equal similarities are compared exactly (SimHash similarities ``1 - k/f`` are the same double for the
same k); no tolerance is applied. The merged cluster's similarities to the others are the element-wise minima of
the two rows (Lance-Williams update for complete linkage), so each step is O(n^2) numpy work and a tree O(n^3)
in numpy, O(n) in Python. ``scipy.cluster.hierarchy.linkage(method="complete")`` is not used: its
nearest-neighbour-chain algorithm resolves ties in another order.

**Children order.** A merge lists its two children by (number of documents, smallest docno) ascending; compression
puts a removed node's children in its place. The order only affects how trees are listed (ids, JSON), never a
measure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: bins of layer compression: [0, .1), [.1, .2), ..., [.8, .9), [.9, 1] (spec 4.4, C-HIER-6)
BIN_EPSILON = 1e-12


@dataclass(frozen=True)
class Cluster:
    """A node of a sub-intent tree: its member documents (indices into the docno-sorted list, ascending), the
    complete-linkage similarity at which it was formed (None for a leaf: one document, or a group merged by
    pruning) and its children (none for a leaf)."""

    members: tuple[int, ...]
    sim: float | None = None
    children: tuple[Cluster, ...] = ()

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def depth(self) -> int:
        """Edges from this node to its deepest leaf (0 for a leaf)."""
        return 0 if self.is_leaf else 1 + max(c.depth() for c in self.children)

    def leaves(self) -> tuple[Cluster, ...]:
        if self.is_leaf:
            return (self,)
        return tuple(leaf for c in self.children for leaf in c.leaves())

    def as_leaf(self) -> Cluster:
        return self if self.is_leaf else Cluster(self.members)

    def describe(self, names: tuple[str, ...] | None = None) -> str:
        """A compact text form, e.g. ``n(.375)[d4, {d2,d6}, n(.625)[d5, {d1,d3}]]`` (tests, debugging)."""
        label = [str(m) if names is None else names[m] for m in self.members]
        if self.is_leaf:
            return label[0] if len(label) == 1 else "{" + ",".join(label) + "}"
        sim = f"{self.sim:.3f}".lstrip("0") if self.sim is not None else "?"
        return f"n({sim})[" + ", ".join(c.describe(names) for c in self.children) + "]"


def _ordered(a: Cluster, b: Cluster) -> tuple[Cluster, Cluster]:
    return (a, b) if (len(a.members), a.members[0]) <= (len(b.members), b.members[0]) else (b, a)


def complete_linkage(similarity: npt.ArrayLike) -> Cluster:
    """The raw agglomerative tree of n >= 1 documents (spec 4.2), rows/columns of ``similarity`` in docno order.

    The matrix must be square and finite; it is made symmetric by the element-wise minimum of it and its
    transpose (a no-op on the symmetric matrices of SimHash and TF-IDF); the diagonal is ignored.
    """
    sim = np.asarray(similarity, dtype=np.float64)
    if sim.ndim != 2 or sim.shape[0] != sim.shape[1] or sim.shape[0] == 0:
        # internal: similarity matrices are built by the engine, one row per document
        raise ValueError("similarity must be a non-empty square matrix")
    if not np.isfinite(sim).all():
        raise ValueError("similarity must be finite")  # internal: SimHash and TF-IDF similarities are finite
    n = sim.shape[0]
    nodes: list[Cluster | None] = [Cluster((i,)) for i in range(n)]
    live = np.minimum(sim, sim.T)
    np.fill_diagonal(live, -np.inf)
    for _ in range(n - 1):
        i, j = divmod(int(np.argmax(live)), n)  # first maximum in row-major order: i < j, the spec's tie rule
        a, b = nodes[i], nodes[j]
        assert a is not None and b is not None
        first, second = _ordered(a, b)
        nodes[i] = Cluster(tuple(sorted(a.members + b.members)), float(live[i, j]), (first, second))
        nodes[j] = None
        row = np.minimum(live[i], live[j])
        live[i, :] = row
        live[:, i] = row
        live[i, i] = -np.inf
        live[j, :] = -np.inf
        live[:, j] = -np.inf
    root = nodes[0]
    assert root is not None
    return root


def prune(tree: Cluster, delta: float) -> Cluster:
    """Collapse every internal node with similarity > delta into a single leaf, top-down (spec 4.3, C-HIER-5);
    with delta = 0 the root collapses unconditionally (the intent becomes flat)."""
    if delta == 0.0:
        return tree.as_leaf()
    return _prune(tree, delta)


def _prune(node: Cluster, delta: float) -> Cluster:
    if node.is_leaf:
        return node
    assert node.sim is not None
    if node.sim > delta:
        return node.as_leaf()
    return Cluster(node.members, node.sim, tuple(_prune(c, delta) for c in node.children))


def similarity_bin(s: float) -> int:
    """``min(floor(10 s + 1e-12), 9)``: bins [0,.1), ..., [.8,.9), [.9,1] (spec 4.4)."""
    return min(math.floor(10.0 * s + BIN_EPSILON), 9)


def compress(tree: Cluster) -> Cluster:
    """Layer compression (spec 4.4): top-down, an internal child in the same similarity bin as its parent is
    replaced by its children (repeatedly, so the parent may get many children); leaves are never removed."""
    if tree.is_leaf:
        return tree
    assert tree.sim is not None
    own = similarity_bin(tree.sim)

    def lifted(child: Cluster) -> list[Cluster]:
        if not child.is_leaf and child.sim is not None and similarity_bin(child.sim) == own:
            return [g for c in child.children for g in lifted(c)]
        return [child]

    kids = [g for c in tree.children for g in lifted(c)]
    return Cluster(tree.members, tree.sim, tuple(compress(c) for c in kids))


def sub_intent_tree(similarity: npt.ArrayLike, delta: float) -> Cluster:
    """Raw tree, pruned at delta, compressed: the tree of one official intent (or of a topic, for TL)."""
    return compress(prune(complete_linkage(similarity), delta))

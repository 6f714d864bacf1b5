"""Parameters and helpers shared by the hierarchical-intent measures (spec 4.6-4.8, Appendix A).

Every hierarchical measure names the hierarchy it is computed on with the same parameters, listed first in its
canonical name (Appendix A order): ``h`` (variant), ``delta`` (pruning), ``top`` (official intents' weights),
``sim`` (document similarity), then the rarely changed ``wi`` / ``wd_gain`` alternatives of spec 11.5.
Parameters that the chosen ``h`` makes ineffective are refused (``delta`` with ``h=FLAT``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evaluation.hierarchy.model import (
    BY_GAINS,
    CLUSTERED,
    SIMS,
    TOPS,
    VARIANTS,
    WD_GAINS,
    WI_COUNTS,
    WITH_INTENT_TREES,
    HierarchySettings,
)
from evaluation.params import Param

FAMILY = "hierarchical"
PAPERS = "spec section 4 (Dou et al., IRJ 2019; Wang et al., SIGIR 2016)"
INPUTS = ("hierarchies",)

H = Param(
    "h",
    "choice",
    "WI",
    "hierarchy: FLAT = official intents only; SUP = super-intents (hierarchy file) over them; WI/WD = sub-intent"
    " layers built under each intent by clustering its relevant documents, weighted by leaf counts / document"
    " gains; SUP+WI, SUP+WD = both; TL-WI, TL-WD = one tree of the topic-level relevant documents, no intents;"
    " given = the hierarchies of the hierarchy file as they are",
    choices=VARIANTS,
)
DELTA = Param(
    "delta", "float", 0.3, "pruning threshold: clusters more similar than delta become one sub-intent (0 = flat)",
    minimum=0.0, maximum=1.0,
).only_when("h", *CLUSTERED)
TOP = Param(
    "top", "choice", "uniform", "official intents' weights: uniform = P(t|q) (the intent weights given, uniform"
    " without), depth = proportional to max(depth of the intent's tree, 1)", choices=TOPS,
).only_when("h", *WITH_INTENT_TREES)
SIM = Param(
    "sim", "choice", "simhash", "document similarity for clustering: simhash = 1 - Hamming/f of the fingerprints"
    " (--fingerprints), tfidf = cosine of TF-IDF vectors of the document texts (--doc-texts)", choices=SIMS,
).only_when("h", *CLUSTERED)
WI = Param(
    "wi", "choice", "leaves", "WI share of a node: leaves = leaves below it after pruning (a merged group once),"
    " docs = documents it covers", choices=WI_COUNTS,
).only_when("h", *(v for v in CLUSTERED if v not in BY_GAINS))
WD_GAIN = Param(
    "wd_gain", "choice", "intent", "WD gain of a document: intent = its grade for the tree's intent (topic-level"
    " grade for TL), global = GG(d) = sum_t w(t) g_t(d)", choices=WD_GAINS,
).only_when("h", *BY_GAINS)
GAMMA = Param("gamma", "float", 0.5, "weight of node recall against the (HD or layer-aware) D-measure",
              minimum=0.0, maximum=1.0)

#: the hierarchy parameters, in canonical order, shared by every hierarchical measure
HIERARCHY_PARAMS = (H, DELTA, TOP, SIM, WI, WD_GAIN)


def settings_of(params: Mapping[str, Any]) -> HierarchySettings:
    """The hierarchy settings named by a measure's parameters."""
    return HierarchySettings(params["h"], params["delta"], params["top"], params["sim"], params["wi"],
                             params["wd_gain"]).normalised()

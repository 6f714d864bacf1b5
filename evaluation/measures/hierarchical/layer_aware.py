"""Layer-aware measures -- ``<M>_LA(h=WI,delta=0.3,top=uniform,sim=simhash)@K`` for M in I_rec, alpha_nDCG,
ERR_IA, Q_IA, D_nDCG, Dsharp_nDCG, D_Q, Dsharp_Q (spec 4.7; Wang et al. SIGIR 2016; Dou et al. IRJ 2019 Eqs. 1-2).

``M_LA@K = sum_{l=1}^{h} w_l M_l@K``: each layer of the topic's hierarchy is a flat intent set (its nodes, their
weights w(v), per-node grades g_v), ``M_l`` is the flat measure of spec section 3 on it -- the very kernel the
flat name runs -- and the layer weights are uniform, ``w_l = 1/h`` (C-HIER-10). LA-measures normalise per layer
and then combine the scores (HD-measures combine the gains, ``hd.py``).

The flat forms used are the spec's section 3 forms, since node weights are the point of a hierarchy:
``ERR_IA_LA`` defaults to ``variant=paper`` (sum_v w(v) ERR_v with R = (2^g - 1)/2^gmax), ``alpha_nDCG_LA`` is
alpha-nDCG with its greedy ideal (which, as in the flat measure, ignores weights), ``I_rec_LA`` covers nodes over
the layer's nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from evaluation.hierarchy.layered import HierarchyInputs
from evaluation.intent_ranking import IntentInputs
from evaluation.measures.adhoc.blended import BETA, GAIN_TABLE
from evaluation.measures.base import CutoffRule, MeasureDef
from evaluation.measures.diversity._shared import ALPHA
from evaluation.measures.diversity.alpha_ndcg import GAIN as ALPHA_GAIN
from evaluation.measures.diversity.alpha_ndcg import alpha_ndcg
from evaluation.measures.diversity.d_ndcg import GAIN as D_GAIN
from evaluation.measures.diversity.d_ndcg import d_ndcg, dsharp_ndcg
from evaluation.measures.diversity.d_q import d_q, dsharp_q
from evaluation.measures.diversity.err_ia import GMAX, err_ia
from evaluation.measures.diversity.intent_precision import subtopic_recall
from evaluation.measures.diversity.q_ia import q_ia
from evaluation.measures.hierarchical._shared import FAMILY, GAMMA, HIERARCHY_PARAMS, INPUTS, PAPERS, settings_of
from evaluation.model import FloatArray
from evaluation.params import Param

FlatKernel = Callable[[IntentInputs, Mapping[str, Any], "int | None"], FloatArray]

ERR_VARIANT = Param(
    "variant", "choice", "paper", "paper: sum_v w(v) ERR_v per layer (spec 3.1, node weights used); ndeval:"
    " ndeval's normalised number per layer (uniform, binary)", choices=("paper", "ndeval"),
)


def layer_aware(inputs: HierarchyInputs, params: Mapping[str, Any], cutoff: int | None, kernel: FlatKernel,
                flat: Mapping[str, Any]) -> FloatArray:
    """sum_l w_l M_l: the flat kernel on every layer, weighted per topic by the layer weights."""
    view = inputs.view(settings_of(params))
    total = np.zeros(view.n_topics)
    for weight, layer in zip(view.layer_weight, view.layers):
        total += weight * kernel(layer, flat, cutoff)
    return total


def _flat(names: tuple[str, ...], fixed: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The flat measure's parameters: the LA measure's own ones plus the fixed ones (relevance level 1)."""

    def pick(params: Mapping[str, Any]) -> dict[str, Any]:
        return {**{n: params[n] for n in names}, **fixed}

    return pick


def _definition(name: str, flat_name: str, kernel: FlatKernel, own: tuple[Param, ...], fixed: Mapping[str, Any],
                summary: str, formula: str, cutoff: CutoffRule = "required") -> MeasureDef:
    pick = _flat(tuple(p.name for p in own), {"rel": 1, **fixed})

    def compute(inputs: HierarchyInputs, params: Mapping[str, Any], k: int | None) -> FloatArray:
        return layer_aware(inputs, params, k, kernel, pick(params))

    return MeasureDef(
        name=name,
        family=FAMILY,
        summary=summary,
        kernel=compute,
        params=(*HIERARCHY_PARAMS, *own),
        cutoff=cutoff,
        inputs=INPUTS,
        reference=PAPERS + " 4.7 (LA-measures, Eqs. 1-2)",
        formula=f"sum_{{l=1..h}} (1/h) {flat_name}_l@K, {flat_name}_l = the flat measure on layer l's nodes"
        f" (weights w(v), grades g_v); {formula}",
        aliases=("LA_" + name[: -len("_LA")],),
    )


I_REC_LA = _definition(
    "I_rec_LA", "I_rec", subtopic_recall, (), {"denominator": "Tstar"},
    "Layer-aware intent recall: per layer, the fraction of its nodes covered in the top K, averaged over layers.",
    "I_rec_l@K = nodes of layer l with a relevant document in the top K / nodes of layer l",
)
ALPHA_NDCG_LA = _definition(
    "alpha_nDCG_LA", "alpha_nDCG", alpha_ndcg, (ALPHA, ALPHA_GAIN), {},
    "Layer-aware alpha-nDCG: alpha-nDCG on every layer's nodes (greedy ideal per layer), averaged over layers.",
    "NG(i) = sum_{v in l} J_v(d_i)(1-alpha)^{c_v(i)} (gain=graded: r(d_i,v)); greedy ideal per layer",
)
ERR_IA_LA = _definition(
    "ERR_IA_LA", "ERR_IA", err_ia, (ALPHA.only_when("variant", "ndeval"), ERR_VARIANT, GMAX), {},
    "Layer-aware ERR-IA: intent-aware ERR on every layer's nodes (node weights), averaged over layers.",
    "ERR_IA_l@K = sum_{v in l} w(v) sum_{i<=K} (1/i) R_v(d_i) prod_{j<i}(1 - R_v(d_j)), R = (2^g-1)/2^gmax",
)
Q_IA_LA = _definition(
    "Q_IA_LA", "Q_IA", q_ia, (BETA, GAIN_TABLE), {},
    "Layer-aware Q-IA: the node-weighted intent-aware Q-measure on every layer, averaged over layers.",
    "Q_IA_l = sum_{v in l} w(v) Q_v (cutoff l: 1/min(l, R_v))", cutoff="optional",
)
D_NDCG_LA = _definition(
    "D_nDCG_LA", "D_nDCG", d_ndcg, (D_GAIN,), {},
    "Layer-aware D-nDCG: D-nDCG on every layer (global gain of the layer's nodes), averaged over layers.",
    "D_nDCG_l: nDCG of GG_l(d) = sum_{v in l} w(v) gain(g_v(d)) with the exact GG_l ideal",
)
DSHARP_NDCG_LA = _definition(
    "Dsharp_nDCG_LA", "Dsharp_nDCG", dsharp_ndcg, (GAMMA, D_GAIN), {},
    "Layer-aware D#-nDCG: D#-nDCG (intent recall and D-nDCG of the layer's nodes) averaged over layers.",
    "= gamma I_rec_LA@K + (1 - gamma) D_nDCG_LA@K",
)
D_Q_LA = _definition(
    "D_Q_LA", "D_Q", d_q, (BETA,), {},
    "Layer-aware D-Q: the Q-measure of every layer's global gain, averaged over layers.",
    "D_Q_l@K: Q at K on GG_l, J = 1[GG_l > 0], ideal by GG_l",
)
DSHARP_Q_LA = _definition(
    "Dsharp_Q_LA", "Dsharp_Q", dsharp_q, (GAMMA, BETA), {},
    "Layer-aware D#-Q: D#-Q of every layer averaged over layers.",
    "= gamma I_rec_LA@K + (1 - gamma) D_Q_LA@K",
)

DEFINITIONS = (I_REC_LA, ALPHA_NDCG_LA, ERR_IA_LA, Q_IA_LA, D_NDCG_LA, DSHARP_NDCG_LA, D_Q_LA, DSHARP_Q_LA)

"""Node recall, hierarchical D-measures and their D# mixes -- ``N_rec@K``, ``HD_nDCG@K``, ``HD_Q@K``,
``HDsharp_nDCG(gamma=0.5)@K``, ``HDsharp_Q@K``, ``LADsharp_nDCG@K``, ``LADsharp_Q@K`` (spec 4.7; Wang et al.
SIGIR 2016; Dou et al. IRJ 2019 Sec 2.3.2).

- ``N_rec@K = |union_{r<=K} N(d_r)| / |V|``, V = every non-root node, dummies included (C-HIER-2; ``dummies=skip``
  leaves them out of both counts).
- ``GG_H(d) = sum_l w_l sum_{v in l} w(v) g_v(d)``; ``HD_nDCG@K`` = the nDCG of GG_H with the exact ideal (judged
  documents by GG_H); ``HD_Q@K`` = the Q-measure at K on GG_H.
- ``HDsharp_X = gamma N_rec + (1 - gamma) HD_X``; ``LADsharp_X = gamma N_rec + (1 - gamma) D_X_LA``.

All of them read the slots of every node together, weighted w_l w(v) (``evaluation.hierarchy.layered``): there
the flat D-measures' global gain is GG_H and intent recall is node recall.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.hierarchy.layered import HierarchyInputs
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.adhoc.blended import BETA
from evaluation.measures.base import MeasureDef, required_cutoff
from evaluation.measures.diversity.d_ndcg import GAIN, d_ndcg
from evaluation.measures.diversity.d_q import d_q
from evaluation.measures.diversity.intent_precision import subtopic_recall
from evaluation.measures.hierarchical._shared import FAMILY, GAMMA, HIERARCHY_PARAMS, INPUTS, PAPERS, settings_of
from evaluation.measures.hierarchical.layer_aware import layer_aware
from evaluation.model import FloatArray
from evaluation.params import Param

DUMMIES = Param(
    "dummies", "choice", "count", "N-rec's node set V: count = every non-root node including dummy nodes (the"
    " literal definition), skip = without the dummy nodes added by extension", choices=("count", "skip"),
)
REFERENCE = PAPERS + " 4.7 (N-rec, HD-, HD#- and LAD#-measures; Dou et al. Sec 2.3.2)"


def node_recall(inputs: HierarchyInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    view = inputs.view(settings_of(params))
    if params["dummies"] == "count":
        return subtopic_recall(view.combined, {"rel": 1, "denominator": "Tstar"}, cutoff)
    data = view.combined.at(1)
    real = ~view.dummy
    covered = np.zeros(data.slots.n_slots)
    covered[data.hit_slot[data.hit_rank() <= cutoff]] = 1.0
    return ratio(data.per_topic(covered * real), data.per_topic(real.astype(np.float64)))


def hd_ndcg(inputs: HierarchyInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    view = inputs.view(settings_of(params))
    return d_ndcg(view.combined, {"gain": params["gain"], "rel": 1}, cutoff)


def hd_q(inputs: HierarchyInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    view = inputs.view(settings_of(params))
    return d_q(view.combined, {"beta": params["beta"], "rel": 1}, cutoff)


def _mix(inputs: HierarchyInputs, params: Mapping[str, Any], cutoff: int | None, other: FloatArray) -> FloatArray:
    gamma = params["gamma"]
    return np.asarray(gamma * node_recall(inputs, params, cutoff) + (1.0 - gamma) * other, dtype=np.float64)


def hdsharp_ndcg(inputs: HierarchyInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    return _mix(inputs, params, cutoff, hd_ndcg(inputs, params, cutoff))


def hdsharp_q(inputs: HierarchyInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    return _mix(inputs, params, cutoff, hd_q(inputs, params, cutoff))


def ladsharp_ndcg(inputs: HierarchyInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    la = layer_aware(inputs, params, cutoff, d_ndcg, {"gain": params["gain"], "rel": 1})
    return _mix(inputs, params, cutoff, la)


def ladsharp_q(inputs: HierarchyInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    la = layer_aware(inputs, params, cutoff, d_q, {"beta": params["beta"], "rel": 1})
    return _mix(inputs, params, cutoff, la)


def _definition(name: str, kernel: Any, own: tuple[Param, ...], summary: str, formula: str) -> MeasureDef:
    return MeasureDef(
        name=name,
        family=FAMILY,
        summary=summary,
        kernel=kernel,
        params=(*HIERARCHY_PARAMS, *own),
        cutoff="required",
        inputs=INPUTS,
        reference=REFERENCE,
        formula=formula,
    )


N_REC = _definition(
    "N_rec", node_recall, (DUMMIES,),
    "Node recall: the fraction of the hierarchy's nodes (every layer) covered by the top K documents.",
    "|union_{r<=K} N(d_r)| / |V|, N(d) = nodes v with g_v(d) > 0, V = every non-root node",
)
HD_NDCG = _definition(
    "HD_nDCG", hd_ndcg, (GAIN,),
    "Hierarchical D-nDCG: nDCG of the layer-weighted global gain over all layers, one exact ideal.",
    "sum_{r<=K} GG_H(d_r)/log2(r+1) / the same for the judged documents sorted by GG_H;"
    " GG_H(d) = sum_l w_l sum_{v in l} w(v) gain(g_v(d))",
)
HD_Q = _definition(
    "HD_Q", hd_q, (BETA,),
    "Hierarchical D-Q: the Q-measure at K on the layer-weighted global gain.",
    "(1/min(K,R)) sum_{n<=K} J(d_n) BR(n) with gain GG_H, J = 1[GG_H > 0], ideal by GG_H",
)
HDSHARP_NDCG = _definition(
    "HDsharp_nDCG", hdsharp_ndcg, (GAMMA, GAIN, DUMMIES),
    "HD#-nDCG: a mix of node recall and hierarchical D-nDCG.",
    "gamma N_rec@K + (1 - gamma) HD_nDCG@K",
)
HDSHARP_Q = _definition(
    "HDsharp_Q", hdsharp_q, (GAMMA, BETA, DUMMIES),
    "HD#-Q: a mix of node recall and hierarchical D-Q.",
    "gamma N_rec@K + (1 - gamma) HD_Q@K",
)
LADSHARP_NDCG = _definition(
    "LADsharp_nDCG", ladsharp_ndcg, (GAMMA, GAIN, DUMMIES),
    "LAD#-nDCG: a mix of node recall and layer-aware D-nDCG.",
    "gamma N_rec@K + (1 - gamma) D_nDCG_LA@K",
)
LADSHARP_Q = _definition(
    "LADsharp_Q", ladsharp_q, (GAMMA, BETA, DUMMIES),
    "LAD#-Q: a mix of node recall and layer-aware D-Q.",
    "gamma N_rec@K + (1 - gamma) D_Q_LA@K",
)

DEFINITIONS = (N_REC, HD_NDCG, HD_Q, HDSHARP_NDCG, HDSHARP_Q, LADSHARP_NDCG, LADSHARP_Q)

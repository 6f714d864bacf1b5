"""Normalised cumulative utility -- ``NCU(stop=u|rb|gu|first,beta=b[,gamma=g][,gain=..][,stopw=..])``
(spec 2.8; Sakai & Robertson 2008 Eqs. 7, 10, 11).

NCU = sum over retrieved relevant ranks n of p_s(n) * BR(n), where p_s is the probability that a user stops at
rank n. The stopping distribution spreads over all R relevant documents, so unretrieved ones add zero utility.
Identities: NCU(stop=u,beta=0) = AP, NCU(stop=u,beta=1) = Q, NCU(stop=first,beta=0) = RR.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.judged_ranking import JudgedRanking
from evaluation.measures.adhoc._shared import FAMILY, FloatArray, ratio, table_gain
from evaluation.measures.adhoc.blended import BETA_MAX, GAIN_TABLE, blended_ratio
from evaluation.measures.base import MeasureDef
from evaluation.params import Param


def ncu(data: JudgedRanking, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    b = blended_ratio(data, params["beta"], params["gain"])
    topic = data.topic_of[b.relevant]
    stop = params["stop"]
    if stop == "u":
        p_stop = ratio(1.0, b.n_rel[topic])
    elif stop == "rb":
        gamma = params["gamma"]
        mass = _geometric_mass(gamma, b.n_rel)
        p_stop = ratio(np.power(gamma, b.found - 1.0), mass[topic])
    elif stop == "gu":
        weights = params["stopw"] or params["gain"]
        per_doc = table_gain(data.grade[b.relevant], weights)
        ideal = data.ideal[data.ideal >= 1]
        total = np.bincount(data.ideal_topic_of[data.ideal >= 1], weights=table_gain(ideal, weights),
                            minlength=data.n_topics)
        p_stop = ratio(per_doc, total[topic])
    else:  # first relevant document only
        p_stop = (b.found == 1).astype(np.float64)
    return np.bincount(topic, weights=p_stop * b.br, minlength=data.n_topics).astype(np.float64)


def _geometric_mass(gamma: float, n_rel: FloatArray) -> FloatArray:
    """sum_{i=1}^{R} gamma^(i-1) per topic."""
    if gamma == 1.0:
        return n_rel.astype(np.float64)
    return (1.0 - np.power(gamma, n_rel)) / (1.0 - gamma)


DEFINITION = MeasureDef(
    name="NCU",
    family=FAMILY,
    summary="Normalised cumulative utility: expected blended ratio at the rank where a user population stops.",
    kernel=ncu,
    params=(
        Param("stop", "choice", None, "stopping distribution: u (uniform), rb (rank-biased), gu (graded-uniform),"
              " first (first relevant)", choices=("u", "rb", "gu", "first")),
        Param("beta", "float", None, "weight of cumulative gain in BR (0 gives precision)", minimum=0.0,
              maximum=BETA_MAX),
        Param("gamma", "float", 0.7, "decay of the rank-biased stopping distribution", minimum=0.0,
              maximum=1.0, min_exclusive=True).only_when("stop", "rb"),
        GAIN_TABLE,
        Param("stopw", "table", (), "stop weights of grades 1, 2, 3, ... for stop=gu (default: the gain table)"
              ).only_when("stop", "gu"),
    ),
    cutoff="none",
    reference="Sakai & Robertson, EVIA 2008 (Eqs. 7, 10, 11)",
    formula="NCU = sum_n p_s(n) BR(n); p_u = 1/R, p_rb = gamma^(C(n)-1)/sum_{i<=R} gamma^(i-1),"
    " p_gu = stop(L_n)/sum_L R(L) stop(L)",
)

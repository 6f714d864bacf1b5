"""Intent-aware precision, average precision and subtopic recall as ndeval computes them -- ``P_IA@k``,
``AP_IA``, ``StRecall@k`` (Appendix E.2; Agrawal et al. WSDM 2009; Zhai et al. SIGIR 2003).

Uniform weights over the intents with relevant documents, binary per-intent relevance:
P_IA@k = relevant (document, intent) pairs in the top k / (k |T|); AP_IA = mean over intents of each intent's
AP (ndeval's MAP-IA, whole run); StRecall@k = intents covered in the top k / |T|.

The papers' forms (spec 3.1-3.2): ``variant=paper`` weighs each intent's P@k / AP by w(t) instead of 1/|T| (the
same number with uniform weights); ``StRecall(denominator=all)`` divides by every intent judged for the topic,
not only those with a relevant document (Sakai's I-rec over all official intents).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from evaluation.formats.distinct import sorted_distinct
from evaluation.intent_ranking import IntentInputs
from evaluation.measures.adhoc._shared import ratio
from evaluation.measures.base import MeasureDef, required_cutoff
from evaluation.measures.diversity._intents import PAPERS, VARIANT, weighted_per_topic
from evaluation.measures.diversity._shared import FAMILY, NDEVAL, REL
from evaluation.model import FloatArray, Qrels
from evaluation.params import Param

DENOMINATOR = Param(
    "denominator",
    "choice",
    "Tstar",
    "Tstar: intents with a relevant document (ndeval's actual subtopics); all: every intent judged for the topic",
    choices=("Tstar", "all"),
)


def precision_ia(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    data = inputs.at(params["rel"])
    within = data.hit_rank() <= cutoff
    if params["variant"] == "paper":
        # count each intent's relevant documents first, then weigh: the sum does not depend on their ranks
        found = np.bincount(data.hit_slot[within], minlength=data.slots.n_slots).astype(np.float64)
        return weighted_per_topic(data, found) / cutoff
    pairs = np.bincount(data.docs.topic_of[data.hit_pos[within]], minlength=data.n_topics)
    return ratio(pairs, cutoff * data.n_slots_per_topic())


def ap_ia(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    data = inputs.at(params["rel"])
    precision = (data.earlier_hits() + 1.0) / data.hit_rank()
    per_slot = np.bincount(data.hit_slot, weights=precision, minlength=data.slots.n_slots)
    ap = ratio(per_slot, data.slots.n_relevant)
    if params["variant"] == "paper":
        return weighted_per_topic(data, ap)
    return ratio(data.per_topic(ap), data.n_slots_per_topic())


def subtopic_recall(inputs: IntentInputs, params: Mapping[str, Any], cutoff: int | None) -> FloatArray:
    cutoff = required_cutoff(cutoff)
    data = inputs.at(params["rel"])
    covered = np.zeros(data.slots.n_slots)
    covered[data.hit_slot[data.hit_rank() <= cutoff]] = 1.0
    if params["denominator"] == "all":
        return ratio(data.per_topic(covered), judged_intents(inputs.qrels, data.qrels_topic))
    return ratio(data.per_topic(covered), data.n_slots_per_topic())


def judged_intents(qrels: Qrels, qrels_topic: np.ndarray) -> FloatArray:
    """Per evaluated topic (given as qrels topic indices, -1 = none): how many distinct intents it has judgments
    for, whatever the grade."""
    n_intents = max(1, len(qrels.intents))
    key = sorted_distinct(qrels.topic * np.int64(n_intents) + qrels.intent)
    per_qrels_topic = np.bincount(key // n_intents, minlength=len(qrels.topics)).astype(np.float64)
    return np.asarray(np.append(per_qrels_topic, 0.0)[qrels_topic], dtype=np.float64)  # index -1 -> the 0 appended


P_IA = MeasureDef(
    name="P_IA",
    family=FAMILY,
    summary="Intent-aware precision at k with uniform intent weights (ndeval's P-IA; variant=paper weighs"
    " each intent's P@k by w(t)).",
    kernel=precision_ia,
    params=(REL, VARIANT),
    cutoff="required",
    inputs=("intents",),
    reference=NDEVAL + "; Agrawal et al., WSDM 2009; variant=paper: " + PAPERS + " 3.1",
    default_follows="ndeval 4.5 (pyndeval)",
    formula="P_IA@k = |{(d,t): d in d@k, J_t(d)=1}| / (k |T|); variant=paper: sum_t w(t) P_t@k",
)

AP_IA = MeasureDef(
    name="AP_IA",
    family=FAMILY,
    summary="Intent-aware average precision: mean over intents of each intent's AP (ndeval's MAP-IA;"
    " variant=paper weighs them by w(t)).",
    kernel=ap_ia,
    params=(REL, VARIANT),
    cutoff="none",
    inputs=("intents",),
    reference=NDEVAL + "; variant=paper: " + PAPERS + " 3.1",
    default_follows="ndeval 4.5 (pyndeval)",
    formula="AP_IA = (1/|T|) sum_t (1/R_t) sum_i J_t(d_i) C_t(i)/i; variant=paper: sum_t w(t) AP_t",
    aliases=("MAP_IA",),
)

ST_RECALL = MeasureDef(
    name="StRecall",
    family=FAMILY,
    summary="Subtopic recall: fraction of the topic's intents covered in the top k (ndeval's strec).",
    kernel=subtopic_recall,
    params=(REL, DENOMINATOR),
    cutoff="required",
    inputs=("intents",),
    reference=NDEVAL + "; Zhai, Cohen & Lafferty, SIGIR 2003; I-rec: Sakai et al., EVIA 2010",
    default_follows="ndeval 4.5 (pyndeval)",
    formula="|{t : exists i <= k, J_t(d_i) = 1}| / |T| (denominator=all: / number of judged intents)",
    aliases=("S_Recall", "I_rec"),
)

DEFINITIONS = (P_IA, AP_IA, ST_RECALL)

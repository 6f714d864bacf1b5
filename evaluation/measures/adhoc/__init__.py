"""Ad hoc (single-aspect) measures, spec section 2: one module per measure (or per small family), listed here."""

from evaluation.measures.adhoc import (
    ap,
    bpref,
    counts,
    dcg,
    err,
    g_measures,
    gmap,
    infap,
    iprec,
    judged,
    ncu,
    ndcg,
    ndcg_averaged,
    precision,
    q_measure,
    rbp,
    recall,
    relative_p,
    rprec,
    rr,
    set_based,
    success,
    unjudged,
    utility,
    yaap,
)

DEFINITIONS = (
    *(
        m.DEFINITION
        for m in (precision, recall, rprec, rr, ap, ndcg, err, rbp, bpref, success, judged, q_measure, ncu)
    ),
    *counts.DEFINITIONS,
    *set_based.DEFINITIONS,
    iprec.DEFINITION,
    infap.DEFINITION,
    gmap.DEFINITION,
    # trec_eval 10.0's other measures (its -m all_trec)
    rprec.MULTIPLE,
    rbp.RESIDUAL,
    bpref.GEOMETRIC,
    iprec.AVERAGE,
    utility.DEFINITION,
    *g_measures.DEFINITIONS,
    *ndcg_averaged.DEFINITIONS,
    relative_p.DEFINITION,
    unjudged.DEFINITION,
    *dcg.DEFINITIONS,
    yaap.DEFINITION,
)

"""Ad hoc (single-aspect) measures, spec section 2: one module per measure (or per small family), listed here."""

from evaluation.measures.adhoc import (
    ap,
    bpref,
    counts,
    err,
    gmap,
    infap,
    iprec,
    judged,
    ncu,
    ndcg,
    precision,
    q_measure,
    rbp,
    recall,
    rprec,
    rr,
    set_based,
    success,
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
)

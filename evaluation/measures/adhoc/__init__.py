"""Ad hoc (single-aspect) measures, spec section 2: one module per measure, listed here."""

from evaluation.measures.adhoc import (
    ap,
    bpref,
    err,
    judged,
    ncu,
    ndcg,
    precision,
    q_measure,
    rbp,
    recall,
    rprec,
    rr,
    success,
)

DEFINITIONS = tuple(
    m.DEFINITION
    for m in (precision, recall, rprec, rr, ap, ndcg, err, rbp, bpref, success, judged, q_measure, ncu)
)

"""Intent-aware and diversity measures, spec section 3; names ndeval uses give ndeval's numbers by default, the
papers' forms are selected with parameters (Appendix E.3), and RBU defaults to its authors' implementation."""

from evaluation.measures.diversity import (
    alpha_ndcg,
    cubetest,
    d_ndcg,
    d_q,
    err_ia,
    eu,
    intent_precision,
    ndcg_ia,
    nrbp,
    q_ia,
    rbp_ia,
    rbu,
    rr_ia,
    subtopic_rr,
)

DEFINITIONS = (
    *alpha_ndcg.DEFINITIONS,
    *err_ia.DEFINITIONS,
    *nrbp.DEFINITIONS,
    *intent_precision.DEFINITIONS,
    *ndcg_ia.DEFINITIONS,
    *rr_ia.DEFINITIONS,
    *rbp_ia.DEFINITIONS,
    *q_ia.DEFINITIONS,
    *subtopic_rr.DEFINITIONS,
    *d_ndcg.DEFINITIONS,
    *d_q.DEFINITIONS,
    *eu.DEFINITIONS,
    *cubetest.DEFINITIONS,
    *rbu.DEFINITIONS,
)

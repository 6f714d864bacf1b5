"""Score-driven measures, spec section 2.9: relevance interpolated from the items' true scores (item-score
files, a side input) instead of judged grades."""

from evaluation.measures.scored import ndcg_phi

DEFINITIONS = (*ndcg_phi.DEFINITIONS,)

"""Document-similarity diversity measures, spec section 5 (Dou et al., IRJ 2019, Sec. 4): the redundancy
score ``S_sim`` and ``D_sim = (M + 1 - S_sim) / 2``, from topic-level judgments and SimHash fingerprints."""

from evaluation.measures.similarity import s_sim

DEFINITIONS = s_sim.DEFINITIONS

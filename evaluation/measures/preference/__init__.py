"""Preference-based measures for novelty and diversity, spec section 6 (Chandar & Carterette, SIGIR 2013): Prf and
nPrf from pairwise and conditional preference judgments, or from preferences simulated from per-intent qrels."""

from evaluation.measures.preference import prf

DEFINITIONS = prf.DEFINITIONS

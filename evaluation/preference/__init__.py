"""Preference-based evaluation (spec section 6; Chandar & Carterette, SIGIR 2013): preference judgments and user
profiles, utility estimates and conditional utilities, stopping distributions, the greedy ideal, Prf / nPrf with
per-profile and pooled estimates, and the preference simulator.

The measures ``Prf`` and ``nPrf`` (``evaluation.measures.preference``) are built on these functions; the side-input
kinds are declared in ``evaluation.side_registry``, which imports their readers and builders when first called.
"""

from evaluation.preference.ideal import IdealRankings, greedy_ideal
from evaluation.preference.judgments import TREC_PROFILE, PreferenceJudgments, Profile, UserProfiles
from evaluation.preference.prf import ProfileScores, evaluate_profiles, ideal_scores, nprf, prf, score_segments
from evaluation.preference.simulate import (
    SimulatedCounts,
    TopicCounts,
    counts_table,
    simulate_counts,
    simulate_preferences,
    simulate_topic_counts,
    simulate_triplets,
    topic_pool,
    topic_rng,
)
from evaluation.preference.stopping import STOPS, probabilities, rank_weights
from evaluation.preference.utilities import (
    AGGREGATES,
    UtilityTable,
    estimate_utilities,
    rank_utilities,
    table_from_counts,
    table_from_estimates,
)

__all__ = [
    "AGGREGATES",
    "STOPS",
    "TREC_PROFILE",
    "IdealRankings",
    "PreferenceJudgments",
    "Profile",
    "ProfileScores",
    "SimulatedCounts",
    "TopicCounts",
    "UserProfiles",
    "UtilityTable",
    "counts_table",
    "estimate_utilities",
    "evaluate_profiles",
    "greedy_ideal",
    "ideal_scores",
    "nprf",
    "prf",
    "probabilities",
    "rank_utilities",
    "rank_weights",
    "score_segments",
    "simulate_counts",
    "simulate_preferences",
    "simulate_topic_counts",
    "simulate_triplets",
    "table_from_counts",
    "table_from_estimates",
    "topic_pool",
    "topic_rng",
]

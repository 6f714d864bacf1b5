"""Meta-evaluation (spec section 8): functions over a score table ``score[measure][run][topic]``.

- ``table``: ``ScoreTable`` from evaluator results or a results document.
- ``unanimity``: Metric Unanimity (8.1); ``scenarios``: its simulated scenarios (8.2).
- ``bootstrap``: discriminative power with the paired bootstrap test, Delta and ASL curves (8.3-8.4).
- ``significance``: pairwise tests between runs, corrections, effect sizes, confidence intervals.
- ``correlation``: Kendall's tau-a/tau-b and tau_ap (8.5-8.6); ``preferences``: user preference agreement (8.7-8.8).
"""

from evaluation.meta.bootstrap import (
    Bootstrap,
    all_pairs,
    bootstrap_indices,
    discriminative_power,
    pair_asl,
    paired_bootstrap,
    resample_counts,
)
from evaluation.meta.correlation import (
    PairCounts,
    correlation_matrix,
    kendall_tau,
    pair_counts,
    system_ranking,
    tau_ap,
    tau_ap_scores,
    tau_ap_symmetric,
)
from evaluation.meta.preferences import (
    Agreement,
    agreement_with_users,
    inter_user_agreement,
    measure_labels,
    parse_labels,
    preference_agreement,
    robustness_curve,
)
from evaluation.meta.scenarios import (
    SCENARIOS,
    RandomGrades,
    ScenarioInputs,
    random_grades,
    random_intent_weights,
    score_scenario,
    simulate,
    truncate_runs,
)
from evaluation.meta.significance import (
    PairwiseTests,
    adjust_p_values,
    bootstrap_interval,
    cohens_d,
    compare_runs,
    hedges_g,
    paired_t_test,
    pairwise_tests,
    randomisation_test,
    t_interval,
    tukey_hsd,
)
from evaluation.meta.table import ScoreTable
from evaluation.meta.unanimity import Unanimity, metric_unanimity, mu_from_counts, unanimity_counts

__all__ = [
    "SCENARIOS",
    "Agreement",
    "Bootstrap",
    "PairCounts",
    "PairwiseTests",
    "RandomGrades",
    "ScenarioInputs",
    "ScoreTable",
    "Unanimity",
    "adjust_p_values",
    "agreement_with_users",
    "all_pairs",
    "bootstrap_indices",
    "bootstrap_interval",
    "cohens_d",
    "compare_runs",
    "correlation_matrix",
    "discriminative_power",
    "hedges_g",
    "inter_user_agreement",
    "kendall_tau",
    "measure_labels",
    "metric_unanimity",
    "mu_from_counts",
    "pair_asl",
    "pair_counts",
    "paired_bootstrap",
    "paired_t_test",
    "pairwise_tests",
    "parse_labels",
    "preference_agreement",
    "random_grades",
    "random_intent_weights",
    "randomisation_test",
    "resample_counts",
    "robustness_curve",
    "score_scenario",
    "simulate",
    "system_ranking",
    "t_interval",
    "tau_ap",
    "tau_ap_scores",
    "tau_ap_symmetric",
    "truncate_runs",
    "tukey_hsd",
    "unanimity_counts",
]

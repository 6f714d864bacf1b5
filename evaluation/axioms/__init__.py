"""The axiomatic harness: the ten formal constraints of Amigo et al. (SIGIR 2018) checked on any measure
(spec section 7).

    from evaluation.axioms import check
    outcomes = check("RBU(p=0.99,e=0.05)")          # constraint name -> Outcome
    outcomes["Pri"].satisfied, outcomes["Pri"].counterexample

Modules: ``instances`` (instance generators), ``constraints`` (the ten checks), ``batch`` (scoring many
instances in one evaluation), ``forms`` (harness-only measure forms such as CT_amigo), ``harness`` (``check``),
``profiles`` (constraint profiles of the registered measures).
"""

from evaluation.axioms.constraints import CONSTRAINTS, NAMES, Constraint
from evaluation.axioms.harness import Counterexample, Outcome, check, check_all, resolve
from evaluation.axioms.profiles import constraint_profile, harness_form, profiles

__all__ = [
    "CONSTRAINTS",
    "NAMES",
    "Constraint",
    "Counterexample",
    "Outcome",
    "check",
    "check_all",
    "constraint_profile",
    "harness_form",
    "profiles",
    "resolve",
]

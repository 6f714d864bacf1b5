"""Meta-evaluation options are declared as ``Param``s (evaluation.params), like measure parameters, and checked
from the declaration alone: types and choices first, then ranges, each refusal naming the method and option."""

from __future__ import annotations

from typing import Any

import pytest

from evaluation.meta.methods import METHODS, options_for
from evaluation.params import Param


def test_every_option_is_a_param_with_a_usable_default() -> None:
    for method in METHODS.values():
        for option in method.options:
            assert isinstance(option, Param) and not option.required
            assert option.value_problem(option.default) is None and option.range_problem(option.default) is None


@pytest.mark.parametrize(("method", "given", "message"), [
    ("discriminative-power", {"resamples": 0}, "discriminative-power: resamples must be between 1 and 100000"),
    ("discriminative-power", {"resamples": 100_001}, "discriminative-power: resamples must be between 1 and 100000"),
    ("discriminative-power", {"resamples": 2.5}, "discriminative-power: resamples must be an integer, not 2.5"),
    ("significance", {"alpha": 1}, "significance: alpha must be between 0 and 1"),
    ("significance", {"alpha": 0}, "significance: alpha must be between 0 and 1"),
    ("significance", {"alpha": "x"}, "significance: alpha must be a number, not 'x'"),
    ("significance", {"seed": True}, "significance: seed must be a number, not True"),
    ("significance", {"test": "z"}, "significance: test must be one of t, randomisation, bootstrap, tukey, not 'z'"),
    ("correlation", {"method": "tau_c"}, "correlation: method must be one of tau_a, tau_b, tau_ap, tau_ap_sym,"
                                         " not 'tau_c'"),
    ("unanimity", {"nope": 1}, "unanimity has no option nope; it takes against, strict"),
    ("scenarios", {"scenarios": ["short_lists", "vibes"]},
     "scenarios: scenarios may list only graded_relevance, aspect_weights, random_truncation, short_lists,"
     " not 'vibes'"),
    ("scenarios", {"scenarios": "short_lists"}, "scenarios: scenarios must be a list, not 'short_lists'"),
    ("scenarios", {"seed": -1}, "scenarios: seed must be >= 0"),
    ("scenarios", {"against": [1]}, "scenarios: lists of measures and scenarios hold names (strings)"),
    ("robustness", {"sizes": [10, 0]}, "robustness: sizes must list 1 to 50 whole numbers of triplets per topic,"
                                       " each from 1 to 100000"),
    ("robustness", {"sizes": []}, "robustness: sizes must list 1 to 50 whole numbers of triplets per topic,"
                                  " each from 1 to 100000"),
    ("robustness", {"sizes": [2.5]}, "robustness: sizes must list 1 to 50 whole numbers of triplets per topic,"
                                     " each from 1 to 100000"),
    ("robustness", {"repetitions": 0}, "robustness: repetitions must be between 1 and 1000"),
    ("robustness", {"tau": "tau_ap"}, "robustness: tau must be one of tau_a, tau_b, not 'tau_ap'"),
    ("robustness", {"per_triplet": 0}, "robustness: per_triplet must be between 1 and 100"),
    # the type of every option is checked before any range
    ("discriminative-power", {"resamples": 0, "alpha": "x"}, "discriminative-power: alpha must be a number, not 'x'"),
])
def test_a_bad_option_is_refused_with_its_method_and_name(method: str, given: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError) as refused:
        options_for(method, given)
    assert str(refused.value) == message


def test_defaults_fill_what_is_not_given() -> None:
    assert options_for("discriminative-power", {"alpha": 0.01}) == {"resamples": 1000, "alpha": 0.01, "seed": 0}
    assert options_for("unanimity", {"against": ["AP"]}) == {"against": ("AP",), "strict": False}


def test_the_simulation_methods_defaults() -> None:
    assert options_for("scenarios", {}) == {"scenarios": (), "against": (), "strict": False, "seed": 0}
    assert options_for("robustness", {"sizes": [5, 50.0]}) == {"sizes": (5, 50), "repetitions": 10, "per_triplet": 5,
                                                                "tau": "tau_a", "seed": 0}
    assert METHODS["scenarios"].needs_inputs and METHODS["robustness"].needs_inputs
    assert not any(METHODS[m].needs_inputs for m in ("unanimity", "correlation", "discriminative-power"))

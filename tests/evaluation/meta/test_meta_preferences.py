"""Agreement with user preferences (spec 8.7; TV-PREF-1 from DOU19 Table 5) and robustness curves (8.8)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.meta import (
    agreement_with_users,
    inter_user_agreement,
    measure_labels,
    parse_labels,
    preference_agreement,
    robustness_curve,
)


def tv_pref_1_pools() -> tuple[list[str], list[str], list[str], list[str]]:
    """D#-nDCG and user labels for DOU19's two pools: 250 random pairs (225 agree, 25 disagree, some of them
    '=' against a preference) and 250 'disagreed' pairs where the measure's label always differs."""
    random_user = [">", "<", "="] * 83 + [">"]
    random_measure = list(random_user)
    for i in range(25):  # 25 disagreements: '=' vs '>', '>' vs '<', ...
        random_measure[i] = {">": "=", "<": ">", "=": "<"}[random_user[i]]
    disagreed_user = [">", "<"] * 125
    disagreed_measure = ["="] * 200 + [{">": "<", "<": ">"}[u] for u in disagreed_user[200:]]
    return random_measure, random_user, disagreed_measure, disagreed_user


def test_tv_pref_1() -> None:
    rm, ru, dm, du = tv_pref_1_pools()
    random_pool = preference_agreement(rm, ru)
    assert (random_pool.agreements, random_pool.disagreements, random_pool.pairs) == (225, 25, 250)
    assert random_pool.tau == pytest.approx(0.800, abs=1e-6)
    disagreed = preference_agreement(dm, du)
    assert disagreed.tau == pytest.approx(-1.000, abs=1e-6)
    both = preference_agreement(rm + dm, ru + du)
    assert (both.agreements, both.disagreements) == (225, 275)
    assert both.tau == pytest.approx(-0.100, abs=1e-6)


def test_measure_labels_with_rounding() -> None:
    left = np.array([0.1 + 0.2, 0.5, 0.2])
    right = np.array([0.3, 0.4, 0.2 + 1e-9])
    assert measure_labels(left, right).tolist() == [0, 1, -1]


def test_parse_labels() -> None:
    assert parse_labels([">", "<", "=", "Left", "right", "E", 1, -1, 0]).tolist() == [1, -1, 0, 1, -1, 0, 1, -1, 0]
    with pytest.raises(ValueError):
        parse_labels(["maybe"])
    with pytest.raises(ValueError):
        preference_agreement([">"], [">", "<"])


def test_users_and_inter_user_agreement() -> None:
    users = {"u1": [">", "<", "=", ">"], "u2": [">", "<", ">", ">"], "u3": ["<", "<", "=", ">"]}
    taus = agreement_with_users([">", "<", "=", "<"], users)
    assert taus == pytest.approx({"u1": 0.5, "u2": 0.0, "u3": 0.0, "average": 1 / 6})
    pairs = inter_user_agreement(users)
    assert pairs == pytest.approx({("u1", "u2"): 0.5, ("u1", "u3"): 0.5, ("u2", "u3"): 0.0})


def test_robustness_curve() -> None:
    reference = np.array([0.9, 0.7, 0.5, 0.3, 0.1])
    samples = {
        1: np.array([[0.1, 0.3, 0.5, 0.7, 0.9], [0.9, 0.7, 0.5, 0.3, 0.1]]),
        5: np.array([[0.8, 0.7, 0.6, 0.2, 0.1], [0.9, 0.8, 0.5, 0.4, 0.1]]),
    }
    assert robustness_curve(reference, samples) == pytest.approx({1: 0.0, 5: 1.0})
